#pragma once
// MultiHeadAttentionScaledQuery (onnxruntime set): a constant factor of the query goes into
// MultiHeadAttention's scale (onnx/attention_scaled_query.hpp has the rule, written for both attention
// ops).
#include "xexp/patterns/onnx/attention_scaled_query.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr multi_head_attention_scaled_query_rule() {
  return scaled_query_rule<"MultiHeadAttention", "com.microsoft">("MultiHeadAttentionScaledQuery");
}

}  // namespace xexp::patterns
