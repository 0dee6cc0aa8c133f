#pragma once
// SimplifiedLayerNormalizationMul (onnxruntime set): the RMSNormalizationMul rule on ONNX Runtime's
// SimplifiedLayerNormalization, at any opset: a constant Mul after it goes into its scale,
// SLN(x, s) * m = SLN(x, s * m), when m has the scale's shape and type.
#include "xexp/patterns/onnx/rms_normalization_mul.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr simplified_layer_normalization_mul_rule() {
  return normalization::rms_normalization_scale_mul<"SimplifiedLayerNormalization">(
      "SimplifiedLayerNormalizationMul", rewrite::opset_at_least(1));
}

}  // namespace xexp::patterns
