#pragma once
// FusedMatMulx2 (onnxruntime set): a tensor scaled by a scalar, Mul(x, s) or Div(x, s), read only by
// MatMuls and com.microsoft FusedMatMuls (attention scales q and k before their product, a shared input
// feeds several products): each product takes the factor into its alpha and reads x itself. One rewrite
// per product; the scaling node goes with its last consumer, so no rewrite adds a node. A product
// reading the scaled tensor twice takes the factor twice, one rewrite per input. The same through a
// Reshape read only by products (a training graph scales the softmax gradient, then reshapes it for
// its two batched products): each product reads a Reshape of x, the copies merge into one
// (remove_duplicated_nodes), and the scaling goes. A Div's 1/s rounds as in FusedMatMulDiv.
#include <tuple>
#include <vector>

#include "xexp/patterns/analysis/fused_matmul.hpp"

namespace xexp::patterns {

namespace matmul {
// Every reader of the value is a MatMul or a FusedMatMul leaving the batch axes in place (the products
// this rule rewrites), and it is no graph output.
inline constexpr auto read_only_by_products = rewrite::fact<"read_only_by_products">([](const ValueView& v) {
  if (!read_only_by(v, {"MatMul", "com.microsoft.FusedMatMul"})) return false;
  for (const ir::Use& u : v.value().uses)
    if (!analysis::keeps_batch_axes(v.graph->node(u.node))) return false;
  return true;
});
inline constexpr auto factor_of = rewrite::fact<"factor_of">(
    [](const ValueView& scaled, const Tensor& s) { return static_cast<float>(scaling_factor(scaled, s)); });
inline constexpr auto alpha_scaled_by =
    rewrite::fact<"alpha_scaled_by">([](const ValueView& fused, const ValueView& scaled, const Tensor& s) {
      return static_cast<float>(analysis::alpha_of(fused) * scaling_factor(scaled, s));
    });
}  // namespace matmul

namespace matmul {
// The FusedMatMul leaves the batch axes in place (transBatchA/B absent or 0). Shared with
// FusedMatMulTranspose and TransposeFusedMatMulB.
inline constexpr auto no_batch_transpose = rewrite::fact<"no_batch_transpose">(
    [](const ValueView& fused) { return analysis::keeps_batch_axes(rewrite::node_of(fused)); });
}  // namespace matmul

inline rewrite::RulePtr fused_matmul_x2_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'a'> a;
  Var<'b'> b;
  Var<'S'> shape;
  Const<'c'> c;
  auto scaling = [&](auto mul, auto div) { return named<'s'>(either(mul, div)); };
  auto scaled = scaling(shared(commutative(Mul(x, c))), shared(Div(x, c)));
  auto reshaped = named<'r'>(shared(Reshape(scaling(commutative(Mul(x, c)), Div(x, c)), shape)));
  auto scalar = named<"scalar_factor">(is_scalar(c) && dtype(c) == dtype(x) && nowhere_zero(c) &&
                                       dtype(x) == ElemType::Float);
  // The product of a and b that takes the factor into its alpha.
  auto product = piece<"product">([factor = matmul::factor_of(scaled, c)](const auto& a, const auto& b) {
    return FusedMatMul(a, b, attr<"alpha"> = factor, attr<"transA"> = 0, attr<"transB"> = 0);
  });
  // The four products reading `operand` (of rank `operand_rank`), which read `source` after, where
  // `fits` holds.
  auto products = [&](auto operand, auto operand_rank, auto source, auto fits) {
    auto fused_a = named<'f'>(FusedMatMul(operand, b));
    auto fused_b = named<'f'>(FusedMatMul(a, operand));
    return std::tuple(
        match(MatMul(operand, b))
            .when(fits && operand_rank >= 2 && rank(b) >= 2)
            .to(product(source, b)),
        match(MatMul(a, operand))
            .when(fits && rank(a) >= 2 && operand_rank >= 2)
            .to(product(a, source)),
        match(fused_a)
            .when(fits && matmul::no_batch_transpose(fused_a))
            .to(rebuild(fused_a, input<0> = source,
                        attr<"alpha"> = matmul::alpha_scaled_by(fused_a, scaled, c))),
        match(fused_b)
            .when(fits && matmul::no_batch_transpose(fused_b))
            .to(rebuild(fused_b, input<1> = source,
                        attr<"alpha"> = matmul::alpha_scaled_by(fused_b, scaled, c))));
  };
  return std::apply(
      [](auto... cases) { return rule("FusedMatMulx2").priority(3).cases(cases...); },
      std::tuple_cat(products(scaled, rank(x), x, named<"fits">(scalar && matmul::read_only_by_products(scaled))),
                     products(reshaped, rank(reshaped), named<"unscaled">(rebuild(reshaped, input<0> = x)),
                              named<"fits">(scalar && matmul::read_only_by_products(reshaped)))));
}

}  // namespace xexp::patterns
