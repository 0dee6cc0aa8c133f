#pragma once
// SkipSimplifiedLayerNormalizationMul (onnxruntime set): a constant Mul after a
// SkipSimplifiedLayerNormalization goes into its gamma, when the constant has gamma's shape and type.
// The normalized output must feed only the Mul; the node's other outputs (the sum of the residual
// branch) move to the rebuilt node.
#include "xexp/patterns/ort/normalization_facts.hpp"
#include "xexp/patterns/ort/normalization_outputs.hpp"
#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr skip_simplified_layer_normalization_mul_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Const<'g'> gamma;
  Const<'m'> m;
  auto skip = named<'n'>(shared(op<"SkipSimplifiedLayerNormalization", "com.microsoft">(a, b, gamma)));
  auto rescaled = [](Rewriter& r, const ValueView& node, const Tensor& g, const Tensor& c) -> std::optional<ir::ValueId> {
    return detail::rebuilt_with_input(r, node, 2, r.initializer(detail::product(g, c)));
  };
  return rule("SkipSimplifiedLayerNormalizationMul")
      .priority(1)
      .match(commutative(Mul(skip, m)))
      .when(single_use(skip) && call("same_scale_shape", detail::same_scale_shape, m, gamma))
      .to(replace_with("scaled_gamma", rescaled, skip, gamma, m));
}

}  // namespace xexp::patterns
