#pragma once
// An analysis of the attention rules (patterns/onnx/attention.hpp): keys and values whose heads are
// repeated for grouped-query attention, read back to the value before the repeat.
#include <cstdint>
#include <optional>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns::analysis {

// Grouped-query attention: kv_heads key and value heads, each serving heads / kv_heads query heads in a
// row, repeated as HF's repeat_kv writes it, x[:, :, None].expand(...).reshape(...):
//   Reshape(Expand(Unsqueeze(x, 2), shape), target)
// of x (batch, kv_heads, total, head_size) to (batch, heads, total, head_size), heads = kv_heads * group.
// The shapes prove it, whatever the exporter computed shape and target with: the Expand gives (batch,
// kv_heads, group, total, head_size), so it broadcasts the new axis only, and a Reshape of that to (batch,
// heads, total, head_size) can only merge kv_heads and group (the dims checked equal, static or
// symbolic). One head (multi-query attention) comes out of the clean-up rules as
//   Squeeze(Expand(Unsqueeze(x, [1, 2]), shape), [1])
// of x (batch, total, head_size), already the 3-D value the fused nodes read (`three_d`).
struct RepeatedHeads {
  ir::ValueId source;
  int64_t kv_heads;
  bool three_d = false;
};
inline std::optional<RepeatedHeads> one_head_repeated(const ir::Graph& g, ir::ValueId x) {
  const ir::Node* squeeze = producer_of(g, x, "Squeeze");
  const ir::Node* expand = squeeze ? producer_of(g, squeeze->inputs[0], "Expand") : nullptr;
  const ir::Node* unsqueeze = expand ? producer_of(g, expand->inputs[0], "Unsqueeze") : nullptr;
  if (!unsqueeze || unsqueezed_axes(g, *unsqueeze) != std::vector<int64_t>{1, 2} ||
      ints_attribute_or_input(g, *squeeze, "axes", 1) != std::vector<int64_t>{1})
    return std::nullopt;
  const std::optional<Shape>& source = g.value(unsqueeze->inputs[0]).shape;
  const std::optional<Shape>& expanded = g.value(expand->outputs[0]).shape;
  if (!source || source->size() != 3 || !expanded || expanded->size() != 5) return std::nullopt;
  const Shape &s = *source, &e = *expanded;
  if (!same_dim(e[0], s[0]) || !same_dim(e[1], Dim(1)) || !same_dim(e[3], s[1]) || !same_dim(e[4], s[2]))
    return std::nullopt;
  return RepeatedHeads{unsqueeze->inputs[0], 1, true};
}
inline std::optional<RepeatedHeads> repeated_heads(const ir::Graph& g, ir::ValueId x) {
  if (std::optional<RepeatedHeads> one = one_head_repeated(g, x)) return one;
  const ir::Node* reshape = producer_of(g, x, "Reshape");
  const ir::Node* expand = reshape ? producer_of(g, reshape->inputs[0], "Expand") : nullptr;
  const ir::Node* unsqueeze = expand ? producer_of(g, expand->inputs[0], "Unsqueeze") : nullptr;
  if (!unsqueeze) return std::nullopt;
  const std::optional<Shape>& source = g.value(unsqueeze->inputs[0]).shape;
  const std::optional<Shape>& expanded = g.value(reshape->inputs[0]).shape;
  const std::optional<Shape>& merged = g.value(x).shape;
  if (unsqueezed_axes(g, *unsqueeze) != std::vector<int64_t>{2} || !source || source->size() != 4 ||
      !expanded || expanded->size() != 5 || !merged || merged->size() != 4)
    return std::nullopt;
  const Shape &s = *source, &e = *expanded, &m = *merged;
  const Dim kv_heads = s[1], group = e[2];
  if (!kv_heads.is_static() || !group.is_static() || group.value() <= 0 || !same_dim(e[0], s[0]) ||
      !same_dim(e[1], s[1]) || !same_dim(e[3], s[2]) || !same_dim(e[4], s[3]) || !same_dim(m[0], s[0]) ||
      !same_dim(m[1], Dim(kv_heads.value() * group.value())) || !same_dim(m[2], s[2]) ||
      !same_dim(m[3], s[3]))
    return std::nullopt;
  return RepeatedHeads{unsqueeze->inputs[0], kv_heads.value()};
}

}  // namespace xexp::patterns::analysis
