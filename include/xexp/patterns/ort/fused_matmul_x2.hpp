#pragma once
// FusedMatMulx2 (onnxruntime set): a tensor scaled by a scalar, Mul(x, s) or Div(x, s), read only by
// MatMuls and com.microsoft FusedMatMuls (attention scales q and k before their product, a shared input
// feeds several products): each product takes the factor into its alpha and reads x itself. One rewrite
// per product; the scaling node goes with its last consumer, so no rewrite adds a node. A product
// reading the scaled tensor twice takes the factor twice, one rewrite per input.
#include <vector>

#include "xexp/patterns/ort/fused_matmul.hpp"

namespace xexp::patterns {

namespace detail {
// Every reader of the scaled value is a MatMul or a FusedMatMul, and it is no graph output.
inline constexpr auto read_only_by_products = rewrite::fact<"read_only_by_products">([](const ValueView& v) {
  return read_only_by(v, {"MatMul", "com.microsoft.FusedMatMul"});
});
inline constexpr auto factor_of = rewrite::fact<"factor_of">(
    [](const ValueView& scaled, const Tensor& s) { return static_cast<float>(scaling_factor(scaled, s)); });
inline constexpr auto alpha_scaled_by =
    rewrite::fact<"alpha_scaled_by">([](const ValueView& fused, const ValueView& scaled, const Tensor& s) {
      return static_cast<float>(alpha_of(fused) * scaling_factor(scaled, s));
    });
// The FusedMatMul leaves the batch axes in place (transBatchA/B absent or 0).
inline constexpr auto no_batch_transpose = rewrite::fact<"no_batch_transpose">(
    [](const ValueView& fused) { return keeps_batch_axes(rewrite::node_of(fused)); });
}  // namespace detail

inline rewrite::RulePtr fused_matmul_x2_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'a'> a;
  Var<'b'> b;
  Const<'c'> c;
  auto scaled = named<'s'>(either(shared(commutative(Mul(x, c))), shared(Div(x, c))));
  auto fused_scaled_a = named<'f'>(FusedMatMul(scaled, b));
  auto fused_scaled_b = named<'f'>(FusedMatMul(a, scaled));
  auto scalar = is_scalar(c) && dtype(c) == dtype(x) && detail::nonzero(c) && dtype(x) == ElemType::Float &&
                detail::read_only_by_products(scaled);
  auto factor = detail::factor_of(scaled, c);
  return rule("FusedMatMulx2")
      .priority(3)
      .cases(match(MatMul(scaled, b))
                 .when(scalar && rank(x) >= 2 && rank(b) >= 2)
                 .to(FusedMatMul(x, b, attr<"alpha"> = factor, attr<"transA"> = 0, attr<"transB"> = 0)),
             match(MatMul(a, scaled))
                 .when(scalar && rank(a) >= 2 && rank(x) >= 2)
                 .to(FusedMatMul(a, x, attr<"alpha"> = factor, attr<"transA"> = 0, attr<"transB"> = 0)),
             match(fused_scaled_a)
                 .when(scalar && detail::no_batch_transpose(fused_scaled_a))
                 .to(rebuild(fused_scaled_a, input<0> = x,
                             attr<"alpha"> = detail::alpha_scaled_by(fused_scaled_a, scaled, c))),
             match(fused_scaled_b)
                 .when(scalar && detail::no_batch_transpose(fused_scaled_b))
                 .to(rebuild(fused_scaled_b, input<1> = x,
                             attr<"alpha"> = detail::alpha_scaled_by(fused_scaled_b, scaled, c))));
}

}  // namespace xexp::patterns
