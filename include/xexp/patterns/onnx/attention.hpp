#pragma once
// Attention (opset >= 23): scaled dot-product attention as exporters write it,
//   scores = Q K^T * scale (+ mask);  Y = Softmax(scores over the last axis) V
// (or torch's safe softmax, Where(IsNaN(Softmax), 0, Softmax), which zeroes fully masked rows)
// with Q, K, V in (batch, heads, sequence, head_size) and Y's heads merged back by Transpose(0,2,1,3)
// and a Reshape to (batch, sequence, heads * head_size), becomes ONNX's Attention in its 3-D form,
// Attention(query, key, value, attn_mask, q_num_heads=heads, kv_num_heads=heads, scale), which gives Y
// merged (and reshaped to (batch * sequence, hidden) where the heads merge into rows). Spellings:
// - K^T: Transpose(K, 0,1,3,2), GPT-2's Transpose(K', 0,2,3,1) of keys in (batch, sequence, heads,
//   head_size), or FusedMatMul(Q, K, transB=1), whose alpha joins the scale;
// - the scale: a Div or Mul by a one-element constant, or none;
// - the mask: none, an Add of a constant or of a (batch|1, heads|1, sequence, total) value, or
//   Where(constant bool, scores, fill) / Where(constant bool, fill, scores) folded into an additive
//   constant. That needs a fill of -1e4 or less (exp underflows: masked weights are 0 either way) and no
//   fully masked row (Where gives those a uniform row, the sum does not); or the Where of a causal mask
//   sliced at run time from a constant table, or computed as a triangle of the sequence length
//   (Trilu(ConstantOfShape((seq, seq)))), whose additive mask is Where(mask, 0, fill)
//   (runtime_mask_fits), or the Add of an additive table sliced or computed so (runtime_bias). A mask that
//   hides exactly the keys after each query (square scores) becomes is_causal=1 instead, the cut at run time
//   going too (causal_bias, causal_cut); so does such a mask computed from constants alone, of any rank,
//   that folding leaves because its table is large (evaluated to be read, computed_constant).
// The 3-D form takes Q, K and V as (batch, sequence, hidden) (ONNX Runtime 1.30 refuses a mix of 3-D and
// 4-D): each goes back to it through Transpose and Reshape, which the default rules cancel against the
// Reshape and Transpose that split the heads, so that one node replaces the splits, the attention and
// the merge. Single-head attention on 3-D Q, K, V (batch, sequence, size) becomes Attention with one head
// (AttentionOneHead).
// Grouped-query attention, keys and values of fewer heads repeated before the scores (repeated_heads),
// gives Attention those keys and values before the repeat, with kv_num_heads.
// The onnxruntime set's MultiHeadAttention is the same rule writing com.microsoft MultiHeadAttention at
// any opset (GroupQueryAttention for grouped keys and values under a causal mask, which it reads before
// their repeat); listed after this one, at opset 23 it finds the attention already fused.
#include "xexp/patterns/onnx/attention_scaled_dot_product.hpp"

namespace xexp::patterns {

namespace attention {

// ONNX's Attention in its 3-D form: Q, K and V all 3-D, the heads merged; is_causal for a causal mask.
// Attention gives fully masked rows 0 itself: the weights ask nothing more.
struct WriteOnnxAttention {
  template <class Q, class K, class V, class Heads, class KvHeads, class Scale, class... More>
  static auto node(const Q& q, const K& k, const V& v, const Heads& heads, const KvHeads& kv_heads,
                   const Scale& scale, const More&... more) {
    using namespace rewrite::dsl;
    return Attention(q, k, v, more..., attr<"q_num_heads"> = heads, attr<"kv_num_heads"> = kv_heads,
                     attr<"scale"> = scale);
  }
  template <class Q, class K, class V, class Heads, class KvHeads, class Scale, class Mask, class Causal>
  static auto masked(const Q& q, const K& k, const V& v, const Heads& heads, const KvHeads& kv_heads,
                     const Scale& scale, const Mask& mask, const Causal& causal) {
    using namespace rewrite::dsl;
    return choose(causal, node(q, k, v, heads, kv_heads, scale, attr<"is_causal"> = 1),
                  node(q, k, v, heads, kv_heads, scale, mask));
  }
  template <class Q, class K, class V, class QK, class Scale, class... Mask>
  static auto heads(const Q& q, const K& k, const V& v, const QK& q_k, const Scale& scale, const Mask&... mask) {
    auto write = [&](const auto&... args) {
      if constexpr (sizeof...(Mask) == 0) return node(args...);
      else return masked_guarded(args..., mask...);
    };
    return write(query_3d(q), key_3d(k, v, q_k), value_3d(k, v, q_k), heads_of(q), kv_num_heads(q, k, v, q_k),
                 scale);
  }
  template <class Q, class K, class V, class Scale, class... Mask>
  static auto single(const Q& q, const K& k, const V& v, const Scale& scale, const Mask&... mask) {
    if constexpr (sizeof...(Mask) == 0) return node(q, k, v, 1, 1, scale);
    else return masked_guarded(q, k, v, 1, 1, scale, mask...);
  }

 private:
  template <class Q, class K, class V, class Heads, class KvHeads, class Scale, class Mask, class Causal,
            class Guarded>
  static auto masked_guarded(const Q& q, const K& k, const V& v, const Heads& heads, const KvHeads& kv_heads,
                             const Scale& scale, const Mask& mask, const Causal& causal, const Guarded&) {
    return masked(q, k, v, heads, kv_heads, scale, mask, causal);
  }
};

}  // namespace attention

inline rewrite::RulePtr attention_rule() {
  return attention::scaled_dot_product_attention<attention::WriteOnnxAttention, attention::AttentionHeads::Split>(
      "Attention", rewrite::opset_at_least(23));
}

// AttentionOneHead: the same for one head on 3-D Q, K, V (batch, sequence, size), Attention with one head.
inline rewrite::RulePtr attention_one_head_rule() {
  return attention::scaled_dot_product_attention<attention::WriteOnnxAttention, attention::AttentionHeads::One>(
      "AttentionOneHead", rewrite::opset_at_least(23));
}

}  // namespace xexp::patterns
