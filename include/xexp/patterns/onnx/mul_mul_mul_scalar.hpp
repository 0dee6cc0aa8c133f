#pragma once
// MulMulMulScalar: (X op1 c1) op (Y op2 c2) with op, op1, op2 in {Mul, Div} and c1, c2 constant scalars
// is (X op Y) * k, k folding the scalars: one scalar multiplication instead of two. So is the chain
// ((X op1 c1) * Y) op2 c2, which training graphs leave in each RMSNorm backward (X * -0.5 * rstd³ / n):
// it becomes (X * Y) * k. The product is reassociated, which changes float rounding (a few ulps). A Div
// only folds in float types: integer division truncates, so x / 3 * 4 is not x * (4 / 3).
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace elementwise {
inline bool is_mul(const ValueView& v) { return rewrite::node_of(v).op_type == Symbol("Mul"); }
// The scalar k, shaped as the larger of c1 and c2 so that the result keeps its rank.
inline Tensor folded_scalar(const Tensor& c1, const Tensor& c2, double k) {
  return eval::filled(c1.type(), c1.rank() >= c2.rank() ? c1.dims() : c2.dims(), k);
}
// The scalar (X op1 c1) op (Y op2 c2) multiplies X op Y by.
inline constexpr auto combined_scale =
    rewrite::fact<"combined_scale">([](const ValueView& outer, const ValueView& left, const Tensor& c1,
                                       const ValueView& right, const Tensor& c2) {
      const double a = scaling_factor(left, c1), b = scaling_factor(right, c2);
      return folded_scalar(c1, c2, is_mul(outer) ? a * b : a / b);
    });
// The scalar ((X op1 c1) * Y) op2 c2 multiplies X * Y by.
inline constexpr auto chained_scale = rewrite::fact<"chained_scale">(
    [](const ValueView& inner, const Tensor& c1, const ValueView& outer, const Tensor& c2) {
      return folded_scalar(c1, c2, scaling_factor(inner, c1) * scaling_factor(outer, c2));
    });
// The nodes are all Mul, or the type is a float one.
inline constexpr auto folds_divisions =
    rewrite::fact<"folds_divisions">([](const ValueView& a, const ValueView& b, const ValueView& c) {
      return xexp::is_float(a.elem()) || (is_mul(a) && is_mul(b) && is_mul(c));
    });
}  // namespace elementwise

inline rewrite::RulePtr mul_mul_mul_scalar_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'y'> y;
  Const<'c'> c1;
  Const<'C'> c2;
  auto left = named<'l'>(op<"Mul|Div">(x, c1));
  auto right = named<'r'>(op<"Mul|Div">(y, c2));
  auto outer = named<'o'>(op<"Mul|Div">(left, right));
  auto middle = named<'m'>(commutative(Mul(left, y)));
  auto chain = named<'o'>(op<"Mul|Div">(middle, c2));
  auto scalars = is_scalar(c1) && is_scalar(c2) && dtype(c1) == dtype(c2);
  return rule("MulMulMulScalar")
      .priority(1)
      .cases(
          match(outer)
              .when(scalars && left != right && elementwise::folds_divisions(outer, left, right))
              .to(Mul(rebuild(outer, x, y), fold(elementwise::combined_scale(outer, left, c1, right, c2)))),
          match(chain)
              .when(scalars && elementwise::folds_divisions(chain, left, middle))
              .to(Mul(rebuild(middle, x, y), fold(elementwise::chained_scale(left, c1, chain, c2)))));
}

}  // namespace xexp::patterns
