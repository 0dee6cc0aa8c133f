#pragma once
// MulMulMulScalar: (X op1 c1) op (Y op2 c2) with op, op1, op2 in {Mul, Div} and c1, c2 constant scalars
// is (X op Y) * k, k folding the scalars: one scalar multiplication instead of two. The product is
// reassociated, which changes float rounding (a few ulps).
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace detail {
inline bool is_mul(const ValueView& v) { return rewrite::node_of(v).op_type == Symbol("Mul"); }
// The scalar (X op1 c1) op (Y op2 c2) multiplies X op Y by.
inline constexpr auto combined_scale =
    rewrite::fact<"combined_scale">([](const ValueView& outer, const ValueView& left, const Tensor& c1,
                                       const ValueView& right, const Tensor& c2) {
      const double a = is_mul(left) ? eval::element_as_double(c1, 0) : 1.0 / eval::element_as_double(c1, 0);
      const double b = is_mul(right) ? eval::element_as_double(c2, 0) : 1.0 / eval::element_as_double(c2, 0);
      const std::vector<int64_t>& dims = c1.rank() >= c2.rank() ? c1.dims() : c2.dims();
      return eval::filled(c1.type(), dims, is_mul(outer) ? a * b : a / b);
    });
}  // namespace detail

inline rewrite::RulePtr mul_mul_mul_scalar_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'y'> y;
  Const<'c'> c1;
  Const<'d'> c2;
  auto left = named<'l'>(op<"Mul|Div">(x, c1));
  auto right = named<'r'>(op<"Mul|Div">(y, c2));
  auto outer = named<'o'>(op<"Mul|Div">(left, right));
  return rule("MulMulMulScalar")
      .priority(1)
      .match(outer)
      .when(is_scalar(c1) && is_scalar(c2) && dtype(c1) == dtype(c2) && left != right)
      .to(Mul(rebuild(outer, x, y), fold(detail::combined_scale(outer, left, c1, right, c2))));
}

}  // namespace xexp::patterns
