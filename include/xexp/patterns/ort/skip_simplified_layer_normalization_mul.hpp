#pragma once
// SkipSimplifiedLayerNormalizationMul (onnxruntime set): a constant Mul after a
// SkipSimplifiedLayerNormalization goes into its gamma, when the constant has gamma's shape and type.
// The normalized output must feed only the Mul; the node's other outputs (the sum of the residual
// branch) move to the rebuilt node.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr skip_simplified_layer_normalization_mul_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Const<'g'> gamma;
  Const<'m'> m;
  auto skip = named<'n'>(shared(op<"SkipSimplifiedLayerNormalization", "com.microsoft">(a, b, gamma)));
  return rule("SkipSimplifiedLayerNormalizationMul")
      .priority(1)
      .match(commutative(Mul(skip, m)))
      .when(single_use(skip) && same_dims_and_type(m, gamma))
      .to(rebuild(skip, input<2> = fold(product(gamma, m))));
}

}  // namespace xexp::patterns
