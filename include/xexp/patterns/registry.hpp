#pragma once
// The rule sets. Including this header registers "default" (patterns/default_rules.hpp), "onnxruntime"
// and "onnxruntime_training" (patterns/onnxruntime_rules.hpp) and the named spec "onnxruntime_cpu" in
// rewrite::Catalog::global(), so that rewrite::rules_from_string("default+onnxruntime") finds them.
#include "xexp/patterns/default_rules.hpp"
#include "xexp/patterns/onnxruntime_rules.hpp"

namespace xexp::patterns {

// "onnxruntime_cpu": the onnxruntime set for ONNX Runtime's CPU provider, without the fusions that ONNX
// Runtime 1.30's CPU kernels run slower than the nodes they replace (timings in bench/README.md). Its
// Skip(Simplified)LayerNormalization kernels loop over each row with a division per element, and
// MultiHeadAttention gains nothing on a single head. Those fusions still fit other providers, and leave
// fewer nodes.
inline constexpr const char* kOnnxRuntimeCpuSpec =
    "onnxruntime-SkipLayerNormalization,SkipLayerNormalizationBias,SkipSimplifiedLayerNormalization,"
    "SkipSimplifiedLayerNormalizationMul,MultiHeadAttentionOneHead";

namespace detail {
inline const bool registered = [] {
  rewrite::Catalog::global().add_set("default", default_rules());
  rewrite::Catalog::global().add_set("onnxruntime", onnxruntime_rules());
  rewrite::Catalog::global().add_set("onnxruntime_training", onnxruntime_training_rules());
  rewrite::Catalog::global().add_named_spec("onnxruntime_cpu", kOnnxRuntimeCpuSpec);
  return true;
}();
}  // namespace detail

}  // namespace xexp::patterns
