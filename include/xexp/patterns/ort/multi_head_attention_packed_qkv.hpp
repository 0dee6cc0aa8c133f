#pragma once
// MultiHeadAttentionPackedQkv (onnxruntime set): ViT's packed projection, unbound into q, k and v, read
// by MultiHeadAttention as a Split of its last axis (onnx/attention_packed_qkv.hpp has the rule, written
// for both attention ops).
#include "xexp/patterns/onnx/attention_packed_qkv.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr multi_head_attention_packed_qkv_rule() {
  return packed_qkv_rule<"MultiHeadAttention", "com.microsoft", false>("MultiHeadAttentionPackedQkv");
}

}  // namespace xexp::patterns
