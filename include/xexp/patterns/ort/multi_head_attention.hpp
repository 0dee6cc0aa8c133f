#pragma once
// MultiHeadAttention (onnxruntime set): the Attention rule's scaled dot-product attention (see
// onnx/attention.hpp for what it matches) becomes com.microsoft MultiHeadAttention(query, key, value, '',
// '', attention_bias, num_heads, scale) at any opset, or MultiHeadAttention(query, key, value, num_heads,
// scale, unidirectional=1) when the mask is exactly causal. MultiHeadAttention takes the query as (batch,
// sequence, hidden): Q goes back to it through Transpose and Reshape, which the default rules cancel
// against the Reshape and Transpose that split the heads. Key and value stay in (batch, heads, sequence,
// head_size), a layout MultiHeadAttention accepts for both; MultiHeadAttentionKeyValue3D then reads them
// from the 3-D values they were split from, when they were. Grouped-query attention under a causal mask
// becomes com.microsoft GroupQueryAttention instead, reading keys and values before their repeat.
// Single-head attention on 3-D Q, K, V (batch, sequence, size) becomes MultiHeadAttention with one head
// (MultiHeadAttentionOneHead, left out of the onnxruntime_cpu set: on ONNX Runtime 1.30's CPU provider it
// runs slower than the nodes it replaces).
#include <vector>

#include "xexp/patterns/onnx/attention.hpp"

namespace xexp::patterns {

namespace attention {

// y, the attention of the weights x, with the fully masked rows zeroed where torch's safe softmax guards
// x (nan_guarded): MultiHeadAttention leaves them NaN. z gives the zero's type.
inline constexpr auto zero_nan_rows =
    rewrite::piece<"zero_nan_rows">([](const auto& x, const auto& y, const auto& z) {
      using namespace rewrite::dsl;
      return choose(nan_guarded(x), Where(IsNaN(y), fold(scalar_zero(z)), y), y);
    });

// com.microsoft MultiHeadAttention: the query 3-D, key and value as they are (keys in (batch, heads,
// total, head_size)), the additive mask as attention_bias, or unidirectional=1 for a causal one. It leaves
// fully masked rows NaN: after torch's safe softmax (nan_guarded) Where(IsNaN(y), 0, y) zeroes them. A
// causal mask hides no whole row.
struct WriteMultiHeadAttention {
  template <class Q, class K, class V, class Heads, class Scale, class... More>
  static auto node(const Q& q, const K& k, const V& v, const Heads& heads, const Scale& scale,
                   const More&... more) {
    using namespace rewrite::dsl;
    return op<"MultiHeadAttention", "com.microsoft">(q, k, v, more..., attr<"num_heads"> = heads,
                                                     attr<"scale"> = scale);
  }
  template <class Q, class K, class V, class Heads, class Scale, class Mask, class Causal, class Weights>
  static auto masked(const Q& q, const K& k, const V& v, const Heads& heads, const Scale& scale,
                     const Mask& mask, const Causal& causal, const Weights& weights) {
    return choose(causal, unidirectional(q, k, v, heads, scale),
                  biased<"attend_one">(q, k, v, heads, scale, mask, weights));
  }
  template <class Q, class K, class V, class Heads, class Scale>
  static auto unidirectional(const Q& q, const K& k, const V& v, const Heads& heads, const Scale& scale) {
    using namespace rewrite::dsl;
    return named<"unidirectional">(node(q, k, v, heads, scale, attr<"unidirectional"> = 1));
  }
  // The node under the additive mask, a piece (attend(x)) the cases and rules print once.
  template <rewrite::FixedString Name, class Q, class K, class V, class Heads, class Scale, class Mask,
            class Weights>
  static auto biased(const Q& q, const K& k, const V& v, const Heads& heads, const Scale& scale,
                     const Mask& mask, const Weights& weights) {
    using namespace rewrite::dsl;
    auto attend =
        piece<Name>([=](const auto& x) { return node(q, k, v, heads, scale, omitted, omitted, x); });
    return zero_nan_rows(weights, let<'G'>(attend(mask)), v);
  }
  template <class K, class QK>
  static auto key(const K& k, const QK& q_k) {
    using namespace rewrite::dsl;
    return named<"key">(choose(keys_in_bsnh(q_k), Transpose(k, attr<"perm"> = analysis::heads_swap()), k));
  }
  template <class Q, class K, class V, class QK, class Scale>
  static auto heads(const Q& q, const K& k, const V& v, const QK& q_k, const Scale& scale) {
    return node(query_3d(q), key(k, q_k), v, heads_of(q), scale);
  }
  // Keys and values repeated from fewer heads (grouped_kv_heads) under a causal mask: GroupQueryAttention
  // reads them before the repeat (kv_num_heads) and masks causally itself from the lengths it is given,
  // every sequence whole: total_sequence_length = sequence, seqlens_k = sequence - 1 for each batch (int32,
  // from the query's Shape at run time; they fold for static sizes, and SameShapeValue shares them between
  // layers otherwise). Its present key and value outputs are unused. `causal` is asked once: it may
  // evaluate a mask computed from constants (computed_constant).
  template <class Q, class K, class V, class QK, class Scale, class Mask, class Causal, class Weights>
  static auto heads(const Q& q, const K& k, const V& v, const QK& q_k, const Scale& scale, const Mask& mask,
                    const Causal& causal, const Weights& weights) {
    using namespace rewrite::dsl;
    // GroupQueryAttention's head size is a multiple of 8 (ONNX Runtime refuses any other).
    return choose(
        causal,
        named<"causal_heads">(choose(has_value(kv_groups(k, v, q_k)) && dim(q, 3) % 8 == 0,
                                     group_query_attention(q, k, v, q_k, scale),
                                     unidirectional(query_3d(q), key(k, q_k), v, heads_of(q), scale))),
        biased_heads(q, k, v, q_k, scale, mask, weights));
  }
  // Under a mask that is never causal (key padding): the biased node alone.
  template <class Q, class K, class V, class QK, class Scale, class Mask, class Weights>
  static auto biased_heads(const Q& q, const K& k, const V& v, const QK& q_k, const Scale& scale,
                           const Mask& mask, const Weights& weights) {
    return biased<"attend">(query_3d(q), key(k, q_k), v, heads_of(q), scale, mask, weights);
  }
  template <class Q, class K, class V, class QK, class Scale>
  static auto group_query_attention(const Q& q, const K& k, const V& v, const QK& q_k, const Scale& scale) {
    using namespace rewrite::dsl;
    constexpr int64_t kInt32 = static_cast<int64_t>(ElemType::Int32);
    auto query = let<'Y'>(query_3d(q));
    auto sizes = let<'Z'>(op<"Shape">(query));  // (batch, sequence, hidden)
    auto total = let<'T'>(Cast(Gather(sizes, fold(int64_tensor({1}))), attr<"to"> = kInt32));
    auto seqlens =
        Expand(Sub(total, fold(Tensor::from<int32_t>({1}, {1}))), Gather(sizes, fold(int64_tensor({0}))));
    return outputs<3>(op<"GroupQueryAttention", "com.microsoft">(
        query, key_3d(k, v, q_k), value_3d(k, v, q_k), omitted, omitted, seqlens, total,
        attr<"num_heads"> = heads_of(q), attr<"kv_num_heads"> = kv_num_heads(q, k, v, q_k),
        attr<"scale"> = scale));
  }
  template <class Q, class K, class V, class Scale>
  static auto single(const Q& q, const K& k, const V& v, const Scale& scale) {
    return node(q, k, v, 1, scale);
  }
  template <class Q, class K, class V, class Scale, class Mask, class Causal, class Weights>
  static auto single(const Q& q, const K& k, const V& v, const Scale& scale, const Mask& mask,
                     const Causal& causal, const Weights& weights) {
    return masked(q, k, v, 1, scale, mask, causal, weights);
  }
};

}  // namespace attention

inline rewrite::RulePtr multi_head_attention_rule() {
  return attention::scaled_dot_product_attention<attention::WriteMultiHeadAttention, attention::AttentionHeads::Split>(
      "MultiHeadAttention", rewrite::opset_at_least(1));
}

inline rewrite::RulePtr multi_head_attention_one_head_rule() {
  return attention::scaled_dot_product_attention<attention::WriteMultiHeadAttention, attention::AttentionHeads::One>(
      "MultiHeadAttentionOneHead", rewrite::opset_at_least(1));
}

// MultiHeadAttentionKeyPadding (onnxruntime_gpu set): the same for a key padding mask read from the inputs,
// one row for all queries (BERT's (1 - attention_mask) * -10000 added, or masked_fill(attention_mask == 0,
// finfo.min)), its bias expanded to a row per query. On ONNX Runtime 1.30's CPU provider the fused node
// runs 2-7% slower than the nodes it replaces (bench/README.md), hence not in the onnxruntime set.
inline rewrite::RulePtr multi_head_attention_key_padding_rule() {
  return attention::scaled_dot_product_attention<attention::WriteMultiHeadAttention, attention::AttentionHeads::Split,
                                             rewrite::OpsetAtLeast, attention::AttentionMasks::KeyPadding>(
      "MultiHeadAttentionKeyPadding", rewrite::opset_at_least(1));
}

// MultiHeadAttention with key and value in (batch, heads, total, head_size), each split from a 3-D
// (batch, total, heads * head_size) value by Reshape and Transpose(0,2,1,3), reads the 3-D values.
inline rewrite::RulePtr multi_head_attention_key_value_3d_rule() {
  using namespace rewrite::dsl;
  Var<'q'> query;
  Var<'k'> k;
  Var<'v'> v;
  Var<'K'> key_shape;
  Var<'V'> value_shape;
  auto key_split = named<'A'>(Reshape(k, key_shape));
  auto value_split = named<'B'>(Reshape(v, value_shape));
  auto keys = Transpose(key_split, attr<"perm"> = analysis::heads_swap());
  auto values = Transpose(value_split, attr<"perm"> = analysis::heads_swap());
  auto attention = named<'R'>(op<"MultiHeadAttention", "com.microsoft">(query, keys, values, etc));
  return rule("MultiHeadAttentionKeyValue3D")
      .priority(2)
      .match(attention)
      .when(analysis::splits_heads(k, key_split) && analysis::splits_heads(v, value_split))
      .to(rebuild(attention, input<1> = k, input<2> = v));
}

}  // namespace xexp::patterns
