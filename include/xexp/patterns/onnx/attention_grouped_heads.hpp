#pragma once
// Grouped-query attention for the attention rules (onnx/attention.hpp): keys and values of fewer heads
// repeated before the scores (analysis::repeated_heads), which the fused nodes read before the repeat.
#include <optional>

#include "xexp/patterns/analysis/repeated_heads.hpp"
#include "xexp/patterns/onnx/attention_scores.hpp"

namespace xexp::patterns::attention {

// The repeat of x's heads (repeated_heads), kept (keys_repeat, values_repeat): the grouping, the
// unrepeated keys and values and kv_num_heads read it.
inline constexpr auto heads_repeat =
    rewrite::fact<"heads_repeat">([](const ValueView& x) { return analysis::repeated_heads(*x.graph, x.id); });
template <class K>
auto keys_repeat(const K& k) {
  return rewrite::keep<"keys_repeat">(heads_repeat(k));
}
template <class V>
auto values_repeat(const V& v) {
  return rewrite::keep<"values_repeat">(heads_repeat(v));
}
// The kv_heads of keys and values repeated alike (their heads_repeat), not in GPT-2's layout; nullopt
// when they are not (then every query head has its own key and value head).
inline constexpr auto grouped_kv_heads = rewrite::fact<"grouped_kv_heads">(
    [](const std::optional<analysis::RepeatedHeads>& keys, const std::optional<analysis::RepeatedHeads>& values,
       const ValueView& q_k) -> std::optional<int64_t> {
      if (!keys || !values || keys->kv_heads != values->kv_heads || keys_in_bsnh.f(q_k)) return std::nullopt;
      return keys->kv_heads;
    });
// grouped_kv_heads of k and v, kept: the key, the value and kv_num_heads of a replacement read it.
template <class K, class V, class QK>
auto kv_groups(const K& k, const V& v, const QK& q_k) {
  return rewrite::keep<"groups">(grouped_kv_heads(keys_repeat(k), values_repeat(v), q_k));
}
// x before the repeat of its heads, and whether that is 3-D already (one head).
inline constexpr auto before_repeat =
    rewrite::fact<"before_repeat">([](const ValueView& x, const std::optional<analysis::RepeatedHeads>& repeat) {
      return ValueView{x.graph, repeat->source};
    });
inline constexpr auto repeats_3d =
    rewrite::fact<"repeats_3d">([](const std::optional<analysis::RepeatedHeads>& repeat) { return repeat->three_d; });
// x merged back to 3-D from before the repeat of its heads.
inline constexpr auto unrepeated = rewrite::piece<"unrepeated">([](const auto& x, const auto& repeat) {
  using namespace rewrite::dsl;
  auto before = found(before_repeat(x, repeat));
  return choose(repeats_3d(repeat), before, merge_heads(before));
});
// kv_num_heads: the grouped keys' kv_heads (kv_groups), else q's heads.
inline constexpr auto kv_heads_of =
    rewrite::fact<"kv_heads_of">([](const ValueView& q, const std::optional<int64_t>& groups) {
      return groups.value_or(static_dim(q, 1));
    });

// Keys and values back to 3-D (key_3d, value_3d); grouped ones (grouped_kv_heads) from before their
// repeat, which the node reading them does itself (kv_num_heads).
template <class K, class V, class QK>
auto key_3d(const K& k, const V& v, const QK& q_k) {
  using namespace rewrite::dsl;
  return named<"key_3d">(choose(has_value(kv_groups(k, v, q_k)), unrepeated(k, keys_repeat(k)),
                                choose(keys_in_bsnh(q_k), Reshape(k, fold(merged_bsnh_shape(k))), merge_heads(k))));
}
template <class K, class V, class QK>
auto value_3d(const K& k, const V& v, const QK& q_k) {
  using namespace rewrite::dsl;
  return named<"value_3d">(choose(has_value(kv_groups(k, v, q_k)), unrepeated(v, values_repeat(v)), merge_heads(v)));
}
template <class Q, class K, class V, class QK>
auto kv_num_heads(const Q& q, const K& k, const V& v, const QK& q_k) {
  return rewrite::named<"kv_heads">(kv_heads_of(q, kv_groups(k, v, q_k)));
}

}  // namespace xexp::patterns::attention
