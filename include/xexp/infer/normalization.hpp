#pragma once
// Normalizations: the normalized output keeps the input's shape. Layer normalizations' saved
// statistics (mean, inverse standard deviation) keep the leading axes and have 1 on the normalized
// ones; BatchNormalization's are per channel.
#include <string>

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

// BatchNormalization: Y has X's shape (N, C, ...); the statistics in training mode (running mean and
// variance from opset 14, saved mean and variance before) are (C), typed as the input mean.
inline void infer_batch_normalization(InferContext& c) {
  const std::optional<Shape>& x = c.shape(0);
  if (x && x->empty()) c.fail("the input is a scalar, expected (N, C, ...)", c.input_name(0));
  Dim channels = !x ? Dim() : x->size() > 1 ? (*x)[1] : Dim(1);
  // spatial = 0 (before opset 9): statistics per element of (C, D1, ...), not per channel.
  const bool per_channel = c.attr_int("spatial", 1) != 0;
  for (std::size_t i = 1; i < 5 && per_channel; ++i) {
    if (!c.shape(i)) continue;
    const Shape& s = *c.shape(i);
    const Dim known = c.constraints().canonical(channels);
    if (s.size() != 1 || (known.is_static() && s[0].is_static() && s[0] != known))
      c.fail("shape " + shape_str(s) + " for " + known.str() + " channels", c.input_name(i));
    channels = c.unify(channels, s[0]);
  }
  c.set_output(0, c.type(0), x);
  const ElemType stats = c.type(3) != ElemType::Undefined ? c.type(3) : c.type(0);
  for (std::size_t k = 1; k < c.output_count(); ++k)
    c.set_output(k, stats, per_channel ? std::optional<Shape>(Shape{channels}) : std::nullopt);
}

inline void add_normalization_rules(RuleTable& t) {
  t.add({"BatchNormalization"}, infer_batch_normalization);
  t.add({"LayerNormalization"}, infer_layer_normalization);
  t.add({"SimplifiedLayerNormalization"}, infer_simplified_layer_normalization);
  t.add(kMsDomain, {"SimplifiedLayerNormalization"}, infer_simplified_layer_normalization);
  t.add(kMsDomain, {"SkipLayerNormalization", "SkipSimplifiedLayerNormalization"}, infer_skip_layer_normalization);
}

}  // namespace xexp::infer
