#pragma once
// RMSNormalizationMul (opset >= 23): a constant Mul after an RMSNormalization goes into its scale,
// RMSNormalization(x, s) * m = RMSNormalization(x, s * m), when m has the scale's shape and type (the
// weight of an RMSNorm layer, after RMSNormalization made the ones). The onnxruntime set's
// SimplifiedLayerNormalizationMul is the same rule on ONNX Runtime's op.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace normalization {
// The rule `name` on `Op`, where `opset_fits` holds.
template <rewrite::FixedString Op, class OpsetFits>
rewrite::RulePtr rms_normalization_scale_mul(const char* name, OpsetFits opset_fits) {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Const<'s'> scale;
  Const<'m'> m;
  Int<'a'> axis;
  Float<'e'> epsilon;
  Int<'S'> stash;
  // The attributes are written on the node (libonnx 1.12 gives no defaults for either op); rebuild keeps
  // them.
  auto norm = named<'n'>(
      op<Op>(x, scale, attr<"axis"> = axis, attr<"epsilon"> = epsilon, attr<"stash_type"> = stash));
  return rule(name)
      .priority(1)
      .match(commutative(Mul(norm, m)))
      .when(opset_fits && same_dims_and_type(m, scale))
      .to(rebuild(norm, input<1> = fold(product(scale, m))));
}
}  // namespace normalization

inline rewrite::RulePtr rms_normalization_mul_rule() {
  return normalization::rms_normalization_scale_mul<"RMSNormalization">("RMSNormalizationMul",
                                                                        rewrite::opset_at_least(23));
}

}  // namespace xexp::patterns
