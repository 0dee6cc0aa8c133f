#pragma once
// Attention: com.microsoft MultiHeadAttention gives (batch, sequence, v_hidden) from its query (batch,
// sequence, hidden) and its value, 3-D (batch, total, v_hidden) or (batch, num_heads, total,
// v_head_size). ONNX's Attention (opset 23) gives (batch, q_num_heads, sequence, v_head_size) from 4-D
// Q, K, V and (batch, sequence, q_num_heads * v_head_size) from 3-D ones, v_head_size being V's hidden
// size over kv_num_heads. The optional outputs (present key and value, scores) keep the query's type.
#include "xexp/core/checked_int.hpp"
#include "xexp/infer/rule_table.hpp"

namespace xexp::infer {

inline void infer_multi_head_attention(InferContext& c) {
  std::optional<Shape> out;
  const std::optional<Shape>& query = c.shape(0);
  const std::optional<Shape>& value = c.shape(2);
  if (query && query->size() == 3 && value) {
    const int64_t heads = c.attr_int("num_heads", 0);
    Dim hidden;
    if (value->size() == 3)
      hidden = (*value)[2];
    else if (value->size() == 4 && (*value)[3].is_static() && heads > 0)
      hidden = Dim(heads * (*value)[3].value());
    out = Shape{(*query)[0], (*query)[1], hidden};
  }
  c.set_output(0, c.type(0), out);
  for (std::size_t k = 1; k < c.output_count(); ++k) c.set_output(k, c.type(0), std::nullopt);
}

// GroupQueryAttention: the output has the query's shape; present_key and present_value are (batch,
// kv_num_heads, total, head_size), total being the sequence when there is no past.
inline void infer_group_query_attention(InferContext& c) {
  const std::optional<Shape>& query = c.shape(0);
  const std::optional<Shape>& key = c.shape(1);
  c.set_output(0, c.type(0), query && query->size() == 3 ? query : std::nullopt);
  std::optional<Shape> present;
  const int64_t kv_heads = c.attr_int("kv_num_heads", 0);
  if (key && key->size() == 3 && (*key)[2].is_static() && kv_heads > 0 && !c.has_input(3))
    present = Shape{(*key)[0], Dim(kv_heads), (*key)[1], Dim((*key)[2].value() / kv_heads)};
  for (std::size_t k = 1; k < c.output_count(); ++k) c.set_output(k, c.type(0), present);
}

inline void infer_attention(InferContext& c) {
  std::optional<Shape> out;
  const std::optional<Shape>& query = c.shape(0);
  const std::optional<Shape>& value = c.shape(2);
  if (query && value && query->size() == 4 && value->size() == 4) {
    out = Shape{(*query)[0], (*query)[1], (*query)[2], (*value)[3]};
  } else if (query && value && query->size() == 3 && value->size() == 3) {
    const int64_t q_heads = c.attr_int("q_num_heads", 0), kv_heads = c.attr_int("kv_num_heads", 0);
    Dim hidden;
    if ((*value)[2].is_static() && q_heads > 0 && kv_heads > 0 && (*value)[2].value() % kv_heads == 0)
      if (const std::optional<int64_t> size = checked_mul((*value)[2].value() / kv_heads, q_heads)) hidden = Dim(*size);
    out = Shape{(*query)[0], (*query)[1], hidden};
  }
  c.set_output(0, c.type(0), out);
  for (std::size_t k = 1; k < c.output_count(); ++k) c.set_output(k, c.type(0), std::nullopt);
}

inline void add_attention_rules(RuleTable& t) {
  t.add(kMsDomain, {"MultiHeadAttention"}, infer_multi_head_attention);
  t.add(kMsDomain, {"GroupQueryAttention"}, infer_group_query_attention);
  t.add({"Attention"}, infer_attention);
}

}  // namespace xexp::infer
