#pragma once
// LayerNormalizationAnyOpset (onnxruntime set): the LayerNormalization rule's decomposition fused below
// opset 17 too, into LayerNormalization in the default domain: ONNX Runtime registers that op from
// opset 1, where ONNX defines it from 17 only, so the default set leaves those models alone.
#include "xexp/patterns/onnx/layer_normalization.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr layer_normalization_any_opset_rule() {
  return normalization::layer_normalization_decomposition("LayerNormalizationAnyOpset",
                                                          rewrite::opset_at_least(1));
}

}  // namespace xexp::patterns
