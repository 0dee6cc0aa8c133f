#pragma once
// SimplifiedLayerNormalizationMul (onnxruntime set): a constant Mul after a SimplifiedLayerNormalization
// goes into its scale, SLN(x, s) * m = SLN(x, s * m), when m has the scale's shape and type (the weight
// of an RMSNorm layer, after SimplifiedLayerNormalization made the ones).
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr simplified_layer_normalization_mul_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Const<'s'> scale;
  Const<'m'> m;
  Int<'a'> axis;
  Float<'e'> epsilon;
  Int<'t'> stash;
  // The attributes are written on the node (no ONNX schema gives their defaults); rebuild keeps them.
  auto sln = named<'n'>(op<"SimplifiedLayerNormalization">(
      x, scale, attr<"axis"> = axis, attr<"epsilon"> = epsilon, attr<"stash_type"> = stash));
  return rule("SimplifiedLayerNormalizationMul")
      .priority(1)
      .match(commutative(Mul(sln, m)))
      .when(same_dims_and_type(m, scale))
      .to(rebuild(sln, input<1> = fold(product(scale, m))));
}

}  // namespace xexp::patterns
