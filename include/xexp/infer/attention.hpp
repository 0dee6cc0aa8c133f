#pragma once
// Attention: com.microsoft MultiHeadAttention gives (batch, sequence, v_hidden) from its query (batch,
// sequence, hidden) and its value, 3-D (batch, total, v_hidden) or (batch, num_heads, total,
// v_head_size). The optional outputs (present key and value, scores) keep the query's type.
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

inline void add_attention_rules(RuleTable& t) {
  t.add(kMsDomain, {"MultiHeadAttention"}, infer_multi_head_attention);
}

}  // namespace xexp::infer
