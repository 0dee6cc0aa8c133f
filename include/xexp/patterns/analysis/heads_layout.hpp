#pragma once
// How exporters split attention heads, which the attention and rotary rules match and rebuild: a
// (batch, sequence, heads * head_size) value is reshaped to (batch, sequence, heads, head_size), then
// transposed by (0,2,1,3) to (batch, heads, sequence, head_size). ONNX Runtime's MultiHeadAttention and
// RotaryEmbedding read the 3-D value and a num_heads attribute instead.
#include <optional>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns::analysis {

// Transpose's perm between (batch, sequence, heads, head_size) and (batch, heads, sequence, head_size).
// A function, not a global: the rules are built during static initialization.
inline std::vector<int64_t> heads_swap() { return {0, 2, 1, 3}; }

// The number of heads a Reshape of x3d (batch, sequence, hidden) to (batch, sequence, heads, head_size)
// makes, or nullopt when `reshaped` is not such a split (or its heads and head size are not static).
inline std::optional<int64_t> heads_split(const ValueView& x3d, const ValueView& reshaped) {
  if (!x3d.shape() || !reshaped.shape() || x3d.shape()->size() != 3 || reshaped.shape()->size() != 4)
    return std::nullopt;
  const Shape &in = *x3d.shape(), &out = *reshaped.shape();
  using rewrite::facts::KnownDim;
  if (!(KnownDim{in[0]} == KnownDim{out[0]}) || !(KnownDim{in[1]} == KnownDim{out[1]}) ||
      !in[2].is_static() || !out[2].is_static() || !out[3].is_static() || out[2].value() <= 0 ||
      in[2].value() != out[2].value() * out[3].value())
    return std::nullopt;
  return out[2].value();
}
inline constexpr auto splits_heads = rewrite::fact<"splits_heads">(
    [](const ValueView& x3d, const ValueView& reshaped) { return heads_split(x3d, reshaped).has_value(); });
inline constexpr auto split_heads_count = rewrite::fact<"split_heads_count">(
    [](const ValueView& x3d, const ValueView& reshaped) { return *heads_split(x3d, reshaped); });

}  // namespace xexp::patterns::analysis
