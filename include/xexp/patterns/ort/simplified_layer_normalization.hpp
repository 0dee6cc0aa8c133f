#pragma once
// SimplifiedLayerNormalization (onnxruntime set): the RMSNormalization rule's decomposition fused into
// ONNX Runtime's SimplifiedLayerNormalization(x, ones, axis=-1, epsilon=eps, stash_type=1) in the
// default domain, where ONNX Runtime registers it at any opset (ONNX defines RMSNormalization from 23).
#include "xexp/patterns/onnx/rms_normalization.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr simplified_layer_normalization_rule() {
  return normalization::rms_normalization_decomposition<"SimplifiedLayerNormalization">(
      "SimplifiedLayerNormalization", rewrite::opset_at_least(1));
}

}  // namespace xexp::patterns
