#pragma once
// Layer normalizations: the normalized output keeps the input's shape; the saved statistics (mean,
// inverse standard deviation) keep the leading axes and have 1 on the normalized ones.
#include "xexp/infer/rule_table.hpp"

namespace xexp::infer {

inline std::optional<Shape> statistics_shape(InferContext& c, int64_t axis) {
  if (!c.shape(0)) return std::nullopt;
  Shape out = *c.shape(0);
  for (std::size_t k = c.normalize_axis(axis, out.size()); k < out.size(); ++k) out[k] = Dim(1);
  return out;
}

// LayerNormalization (opset 17): Y, Mean, InvStdDev, statistics in stash_type (float by default).
inline void infer_layer_normalization(InferContext& c) {
  c.set_output(0, c.type(0), c.shape(0));
  const auto stash = static_cast<ElemType>(c.attr_int("stash_type", 1));
  const auto stats = statistics_shape(c, c.attr_int("axis", -1));
  c.set_output(1, stash, stats);
  c.set_output(2, stash, stats);
}

// SimplifiedLayerNormalization (onnxruntime, RMS norm): Y, inv_std_var.
inline void infer_simplified_layer_normalization(InferContext& c) {
  c.set_output(0, c.type(0), c.shape(0));
  c.set_output(1, static_cast<ElemType>(c.attr_int("stash_type", 1)), statistics_shape(c, c.attr_int("axis", -1)));
}

// com.microsoft SkipLayerNormalization / SkipSimplifiedLayerNormalization: output, mean, inv_std_var,
// input_skip_bias_sum, both forms (ONNX Runtime's contrib op schemas list the same four outputs).
inline void infer_skip_layer_normalization(InferContext& c) {
  const auto stats = statistics_shape(c, -1);
  c.set_output(0, c.type(0), c.shape(0));
  c.set_output(1, ElemType::Float, stats);
  c.set_output(2, ElemType::Float, stats);
  c.set_output(3, c.type(0), c.shape(0));
}

inline void add_normalization_rules(RuleTable& t) {
  t.add({"LayerNormalization"}, infer_layer_normalization);
  t.add({"SimplifiedLayerNormalization"}, infer_simplified_layer_normalization);
  t.add(kMsDomain, {"SimplifiedLayerNormalization"}, infer_simplified_layer_normalization);
  t.add(kMsDomain, {"SkipLayerNormalization", "SkipSimplifiedLayerNormalization"}, infer_skip_layer_normalization);
}

}  // namespace xexp::infer
