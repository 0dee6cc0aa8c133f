#pragma once
// SimplifiedLayerNormalizationMul (onnxruntime set): a constant Mul after a SimplifiedLayerNormalization
// goes into its scale, SLN(x, s) * m = SLN(x, s * m), when m has the scale's shape and type (the weight
// of an RMSNorm layer, after SimplifiedLayerNormalization made the ones).
#include "xexp/patterns/ort/normalization_facts.hpp"
#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr simplified_layer_normalization_mul_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Const<'s'> scale;
  Const<'m'> m;
  Int<'a'> axis;
  Float<'e'> epsilon;
  Int<'t'> stash;
  auto sln = op<"SimplifiedLayerNormalization">(x, scale, attr<"axis"> = axis, attr<"epsilon"> = epsilon,
                                               attr<"stash_type"> = stash);
  return rule("SimplifiedLayerNormalizationMul")
      .priority(1)
      .match(commutative(Mul(sln, m)))
      .when(call("same_scale_shape", detail::same_scale_shape, m, scale))
      .to(op<"SimplifiedLayerNormalization">(x, fold(call("product", detail::product, scale, m)),
                                            attr<"axis"> = axis, attr<"epsilon"> = epsilon,
                                            attr<"stash_type"> = stash));
}

}  // namespace xexp::patterns
