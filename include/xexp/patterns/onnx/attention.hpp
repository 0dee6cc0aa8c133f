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
//   sliced at run time from a constant table, whose additive mask is Where(mask, 0, fill)
//   (runtime_mask_fits), or the Add of an additive table sliced so (runtime_bias). A mask that hides
//   exactly the keys after each query (square scores) becomes is_causal=1 instead, the cut at run time
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
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <vector>

#include "xexp/patterns/analysis/attention_masks.hpp"
#include "xexp/patterns/analysis/repeated_heads.hpp"
#include "xexp/patterns/analysis/safe_softmax.hpp"
#include "xexp/patterns/analysis/fused_matmul.hpp"
#include "xexp/patterns/analysis/heads_layout.hpp"

namespace xexp::patterns {

namespace detail {

// The factor that scales Q K^T in the scores s (q_k is the product): FusedMatMul's alpha, times or divided
// by one-element constants; nullopt for anything else (a per-head scale, a batched transposition).
inline std::optional<float> scale_between(const ValueView& s, const ValueView& q_k) {
  const ir::Graph& g = *s.graph;
  const ir::Node& product = node_of(q_k);
  double scale = 1;
  if (has_op(product, "FusedMatMul")) {
    if (!analysis::keeps_batch_axes(product)) return std::nullopt;
    scale = analysis::alpha_of(q_k);
  }
  if (s.id == q_k.id) return static_cast<float>(scale);
  const ir::Node& n = node_of(s);
  const ir::ValueId other = n.inputs[0] == q_k.id ? n.inputs[1] : n.inputs[0];
  const std::optional<double> c = scalar_constant(g, other);
  if (!c || *c == 0 || !std::isfinite(*c)) return std::nullopt;
  return static_cast<float>(has_op(n, "Div") ? scale / *c : scale * *c);
}
inline constexpr auto attention_scale = rewrite::fact<"attention_scale">(scale_between);

// K^T is GPT-2's Transpose(K', 0,2,3,1): the captured keys are in (batch, sequence, heads, head_size).
inline constexpr auto keys_in_bsnh = rewrite::fact<"keys_in_bsnh">([](const ValueView& q_k) {
  const ir::Node& product = node_of(q_k);
  if (!has_op(product, "MatMul")) return false;
  const ir::Node& transpose = q_k.graph->node(q_k.graph->value(product.inputs[1]).producer);
  const ir::Attribute* perm = transpose.attribute(Symbol("perm"));
  return perm && perm->ints == std::vector<int64_t>{0, 2, 3, 1};
});

// The heads merged into rows, y (batch * sequence, heads * v_head_size), as a Linear on 2-D rows reads
// them: the attention's (batch, sequence, hidden) result is then reshaped to (-1, hidden) (rows_shape).
// Its second dimension fixes the first, the element count being the same.
inline bool merges_into_rows(const ValueView& y) { return has_rank(y, 2); }
inline constexpr auto flattens_rows = rewrite::fact<"flattens_rows">(merges_into_rows);
inline constexpr auto rows_shape = rewrite::fact<"rows_shape">(
    [](const ValueView& y) { return int64_tensor({-1, static_dim(y, 1)}); });

// q (batch, heads, sequence, head_size), keys (batch, heads, total, head_size) or, keys_in_bsnh,
// (batch, total, heads, head_size), v (batch, heads, total, v_head_size) and the result y (batch,
// sequence, heads * v_head_size), or its rows (merges_into_rows): same batch everywhere
// (MultiHeadAttention does not broadcast it), heads and head sizes known.
inline constexpr auto heads_fit = rewrite::fact<"heads_fit">(
    [](const ValueView& q, const ValueView& k, const ValueView& v, const ValueView& q_k, const ValueView& y) {
      if (!has_rank(q, 4) || !has_rank(k, 4) || !has_rank(v, 4) || !(has_rank(y, 3) || merges_into_rows(y)))
        return false;
      const int64_t heads = static_dim(q, 1), head_size = static_dim(q, 3), v_head_size = static_dim(v, 3);
      if (heads <= 0 || head_size <= 0 || v_head_size <= 0) return false;
      const bool bsnh = keys_in_bsnh.f(q_k);
      const KnownDim batch = dim_of(q, 0), total = dim_of(k, bsnh ? 1 : 2);
      const bool merged = merges_into_rows(y) ? dim_of(y, 1) == heads * v_head_size
                                              : dim_of(y, 0) == batch && dim_of(y, 1) == dim_of(q, 2) &&
                                                    dim_of(y, 2) == heads * v_head_size;
      return dim_of(k, 0) == batch && dim_of(k, bsnh ? 2 : 1) == heads && dim_of(k, 3) == head_size &&
             dim_of(v, 0) == batch && dim_of(v, 1) == heads && dim_of(v, 2) == total && merged;
    });
// Single head: q (batch, sequence, size), k (batch, total, size), v (batch, total, v_size).
inline constexpr auto single_head_fits =
    rewrite::fact<"single_head_fits">([](const ValueView& q, const ValueView& k, const ValueView& v) {
      if (!has_rank(q, 3) || !has_rank(k, 3) || !has_rank(v, 3) || static_dim(q, 2) <= 0 ||
          static_dim(v, 2) <= 0)
        return false;
      return dim_of(k, 0) == dim_of(q, 0) && dim_of(v, 0) == dim_of(q, 0) && dim_of(k, 2) == dim_of(q, 2) &&
             dim_of(v, 1) == dim_of(k, 1);
    });
inline constexpr auto heads_of =
    rewrite::fact<"heads_of">([](const ValueView& q) { return static_dim(q, 1); });
// The Reshape target that merges q's heads once transposed to (batch, sequence, heads, head_size): static
// where q's sizes are, so that ReshapeReshape folds it into the Reshape that split the heads; 0 (copy)
// for a dynamic batch or sequence.
inline constexpr auto merged_heads_shape = rewrite::fact<"merged_heads_shape">([](const ValueView& q) {
  return int64_tensor({std::max<int64_t>(static_dim(q, 0), 0), std::max<int64_t>(static_dim(q, 2), 0),
                       static_dim(q, 1) * static_dim(q, 3)});
});
// The same target for keys already in (batch, sequence, heads, head_size) (keys_in_bsnh).
inline constexpr auto merged_bsnh_shape = rewrite::fact<"merged_bsnh_shape">([](const ValueView& k) {
  return int64_tensor({std::max<int64_t>(static_dim(k, 0), 0), std::max<int64_t>(static_dim(k, 1), 0),
                       static_dim(k, 2) * static_dim(k, 3)});
});
// The repeat of x's heads (repeated_heads), kept: the grouping, the unrepeated keys and values and
// kv_num_heads read it.
inline constexpr auto heads_repeat =
    rewrite::fact<"heads_repeat">([](const ValueView& x) { return analysis::repeated_heads(*x.graph, x.id); });
template <class X>
auto kept_repeat(const X& x) {
  return rewrite::keep<'h'>(heads_repeat(x));
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
  return rewrite::keep<'g'>(grouped_kv_heads(kept_repeat(k), kept_repeat(v), q_k));
}
// x before the repeat of its heads, and whether that is 3-D already (one head).
inline constexpr auto before_repeat =
    rewrite::fact<"before_repeat">([](const ValueView& x, const std::optional<analysis::RepeatedHeads>& repeat) {
      return ValueView{x.graph, repeat->source};
    });
inline constexpr auto repeats_3d =
    rewrite::fact<"repeats_3d">([](const std::optional<analysis::RepeatedHeads>& repeat) { return repeat->three_d; });
// kv_num_heads: the grouped keys' kv_heads (kv_groups), else q's heads.
inline constexpr auto kv_heads_of =
    rewrite::fact<"kv_heads_of">([](const ValueView& q, const std::optional<int64_t>& groups) {
      return groups.value_or(static_dim(q, 1));
    });

// x (batch, heads, sequence, head_size) back to (batch, sequence, heads * head_size).
template <class X>
auto merge_heads(const X& x) {
  using namespace rewrite::dsl;
  return Reshape(Transpose(x, attr<"perm"> = analysis::heads_swap()), fold(merged_heads_shape(x)));
}

inline constexpr auto attention_bias = rewrite::fact<"attention_bias">(
    [](const ValueView& masked, const ValueView& s) { return analysis::folded_bias(masked, s); });

// analysis::runtime_mask_table, kept by the rule: its conditions and its replacement read the table.
inline constexpr auto mask_table = rewrite::fact<"mask_table">(analysis::runtime_mask_table);
// An additive mask cut at run time (the mask_table of an Add).
inline constexpr auto runtime_bias =
    rewrite::fact<"runtime_bias">([](const ValueView& masked, const std::optional<Tensor>& table) {
      return has_op(node_of(masked), "Add") && table.has_value();
    });
inline constexpr auto is_4d = rewrite::fact<"is_4d">([](const ValueView& x) { return has_rank(x, 4); });
// The leading axes that make x 4-D.
inline constexpr auto axes_to_4d = rewrite::fact<"axes_to_4d">([](const ValueView& x) {
  std::vector<int64_t> axes(4 - x.shape()->size());
  std::iota(axes.begin(), axes.end(), 0);
  return axes;
});
template <class X>
auto bias_4d(const X& x) {
  using namespace rewrite::dsl;
  return choose(is_4d(x), x, Unsqueeze(x, attr<"axes"> = axes_to_4d(x)));
}
inline constexpr auto runtime_mask =
    rewrite::fact<"runtime_mask">([](const std::optional<Tensor>& table) { return table.has_value(); });
// The Where keeps the scores where its condition holds: Where(mask, scores, fill).
inline constexpr auto keeps_scores_where_true = rewrite::fact<"keeps_scores_where_true">(
    [](const ValueView& masked, const ValueView& s) { return node_of(masked).inputs[1] == s.id; });
// Attention's is_causal (no past: key j hidden from query i when j > i) says what a mask of square scores
// says when it hides exactly those keys, the same way in every batch and head: an additive bias
// (attention_bias) of 0 and values of -1e4 or less (exp underflows as for -inf), or a mask cut at run
// time from a table (runtime_mask) whose leading square (where any cut of it lies) is lower triangular.
inline constexpr auto causal_bias =
    rewrite::fact<"causal_bias">([](const ValueView& masked, const ValueView& s) {
      const std::optional<Tensor> bias = analysis::folded_bias(masked, s, true);
      return bias && analysis::hides_later_keys(*bias);
    });
inline constexpr auto causal_cut = rewrite::fact<"causal_cut">(
    [](const ValueView& masked, const ValueView& s, const std::optional<Tensor>& table) {
      const ir::Node& n = node_of(masked);
      return table && analysis::cut_hides_later_keys(*table, has_op(n, "Add"), n.inputs[1] == s.id);
    });
// A zero of the scores' type, (1, 1, 1, 1): Where broadcasts the bias to 4-D with it.
inline constexpr auto zero_bias = rewrite::fact<"zero_bias">([](const ValueView& s) {
  return eval::filled(s.elem(), {1, 1, 1, 1}, 0.0);
});
inline constexpr auto scalar_zero =
    rewrite::fact<"scalar_zero">([](const ValueView& s) { return eval::filled(s.elem(), {}, 0.0); });

// W = MatMul(weights, v) reads its weights through the safe softmax.
inline constexpr auto nan_guarded = rewrite::fact<"nan_guarded">(
    [](const ValueView& w) { return analysis::safe_softmax_guard(*w.graph, node_of(w).inputs[0]).inner != ir::kNone; });

// A mask added as it is: a (batch|1, heads|1, sequence, total) value of the scores' type. Its sequence and
// total are the scores' as the Add pairs them (broadcast_pairs): a mask sliced at run time to the total
// length (Phi-3's) has its own symbols for them.
// What every added mask needs: an Add of a 4-D m of the scores' type, batch and heads 1 or the scores'.
inline bool adds_batch_and_heads(const ValueView& masked, const ValueView& m, const ValueView& s) {
  if (!has_op(node_of(masked), "Add") || !has_rank(m, 4) || !has_rank(s, 4) || m.elem() != s.elem()) return false;
  auto one_or = [&](int64_t axis) { return dim_of(m, axis) == 1 || dim_of(m, axis) == dim_of(s, axis); };
  return one_or(0) && one_or(1);
}
inline bool pairs_axis(const ValueView& m, const ValueView& s, std::size_t axis) {
  return broadcast_pairs((*m.shape())[axis], (*s.shape())[axis]);
}
inline constexpr auto passes_as_bias =
    rewrite::fact<"passes_as_bias">([](const ValueView& masked, const ValueView& m, const ValueView& s) {
      return adds_batch_and_heads(masked, m, s) && pairs_axis(m, s, 2) && pairs_axis(m, s, 3);
    });

// ---- key padding masks (AttentionMasks::KeyPadding) ---------------------------------------------------
// A mask read from the model's inputs with one row for all queries, (batch|1, heads|1, 1, total) as BERT
// computes it from its attention_mask, hides keys, not (query, key) pairs. The fused nodes want a row per
// query: the bias is expanded to [1, 1, sequence, 1] (query_rows), so the scores' sequence must be static.
inline constexpr auto query_rows = rewrite::fact<"query_rows">(
    [](const ValueView& s) { return int64_tensor({1, 1, static_dim(s, -2), 1}); });
// Added as it is: m (batch|1, heads|1, 1, total) of the scores' type (BERT's (1 - mask) * -10000).
inline constexpr auto pads_keys =
    rewrite::fact<"pads_keys">([](const ValueView& masked, const ValueView& m, const ValueView& s) {
      return adds_batch_and_heads(masked, m, s) && analysis::one_row_for_all_queries(m, s) && pairs_axis(m, s, 3);
    });
// Where(mask, scores, fill) or Where(mask, fill, scores), the mask (batch|1, heads|1, 1, total) as it
// broadcasts against the 4-D scores (masked_fill(attention_mask == 0, finfo.min)). Nothing is known of
// its values, a row may be hidden whole: the additive bias Where(mask, 0, fill) is exact only because the
// fill swallows any score, float32 scores with a finite fill of -1e30 or less (a score under 1e22 added
// to it rounds to it, so a hidden row is the fill throughout: uniform weights either way). A -inf fill
// would give such a row NaN where ONNX's Attention gives 0; float16's lowest (-65504) does not swallow a
// score, nor does -1e30 in float64 one over 1e13.
inline constexpr auto padding_where =
    rewrite::fact<"padding_where">([](const ValueView& masked, const ValueView& condition, const ValueView& s) {
      const ir::Node& n = node_of(masked);
      if (!has_op(n, "Where") || !has_rank(s, 4) || !condition.shape() || condition.shape()->size() > 4 ||
          condition.elem() != ElemType::Bool || s.elem() != ElemType::Float ||
          !analysis::one_row_for_all_queries(condition, s))
        return false;
      const std::optional<double> fill = scalar_constant(*s.graph, n.inputs[n.inputs[1] == s.id ? 2 : 1]);
      if (!fill || !std::isfinite(*fill) || *fill > -1e30) return false;
      const auto rank = static_cast<int64_t>(condition.shape()->size());
      for (int64_t axis = -rank; axis < 0; ++axis) {
        const Dim& c = (*condition.shape())[static_cast<std::size_t>(rank + axis)];
        const Dim& d = (*s.shape())[static_cast<std::size_t>(4 + axis)];
        if (axis == -1 ? !broadcast_pairs(c, d) : !(c == Dim(1) || c == d)) return false;
      }
      return true;
    });

// Which attentions a rule fuses: heads split from and merged back to (batch, sequence, hidden) values, or
// one head on 3-D values. They are two rules because a single head gains least from fusing: ONNX Runtime
// 1.30's CPU MultiHeadAttention of one head is slower than the four nodes it replaces (bench/README.md).
enum class AttentionHeads { Split, One };
// Which masks: the ones written per (query, key) pair or causal, or only key padding masks read from the
// inputs (one row for all queries), a rule of their own: MultiHeadAttention with such a bias runs slower
// than the nodes it replaces on ONNX Runtime 1.30's CPU provider (bench/README.md).
enum class AttentionMasks { PerPair, KeyPadding };

// The rule `name`, where `opset_fits` holds. Write::heads(q, k, v, q_k, scale[, mask, causal, guarded])
// writes the attention of q, k, v split in heads (k in (batch, sequence, heads, head_size) when
// keys_in_bsnh(q_k)), merged to (batch, sequence, hidden); Write::single(q, k, v, scale[, mask, causal,
// guarded]) that of one head on 3-D values. The mask is additive, (batch|1, heads|1, sequence, total);
// `causal` tells whether it is exactly causal (causal_bias, causal_cut), `guarded` whether fully masked
// rows must give 0 (nan_guarded).
template <class Write, AttentionHeads Heads, class OpsetFits, AttentionMasks Masks = AttentionMasks::PerPair>
rewrite::RulePtr scaled_dot_product_attention(const char* name, OpsetFits opset_fits) {
  using namespace rewrite::dsl;
  using Perm = std::vector<int64_t>;
  Var<'q'> q;
  Var<'k'> k;
  Var<'v'> v;
  Var<'s'> s;
  Var<'m'> m;
  Var<'c'> condition;
  Int<'a'> axis;
  auto keys_transposed = FusedMatMul(q, k, attr<"transA"> = 0, attr<"transB"> = 1);
  auto scaled = [&](const auto& product) {
    return named<'S'>(either(either(Div(product, s), commutative(Mul(product, s))), product));
  };
  auto masked = [&](const auto& scores) {
    return named<'M'>(either(either(commutative(Add(scores, m)), Where(condition, scores, m)),
                             Where(condition, m, scores)));
  };
  auto masked_by_where = [&](const auto& scores) {
    return named<'M'>(either(Where(condition, scores, m), Where(condition, m, scores)));
  };
  // The additive mask Where(mask, 0, fill) or Where(mask, fill, 0), for a mask cut at run time.
  auto where_bias = [&](const auto& mask, const auto& scores) {
    return choose(keeps_scores_where_true(mask, scores), Where(condition, fold(zero_bias(scores)), m),
                  Where(condition, m, fold(zero_bias(scores))));
  };
  // W = MatMul(weights, v), the weights a Softmax, or torch's safe softmax around it (nan_guarded).
  auto weighted = [&](const auto& scores) {
    return named<'W'>(
        MatMul(through<"safe_softmax", analysis::safe_softmax_guard>(Softmax(scores, attr<"axis"> = axis)), v));
  };

  // Q K^T: of Q, K split in heads (4-D, GPT-2's keys in (batch, sequence, heads, head_size) too), or 3-D.
  auto q_k = [&] {
    if constexpr (Heads == AttentionHeads::Split)
      return named<'Q'>(either(either(MatMul(q, Transpose(k, attr<"perm"> = Perm{0, 1, 3, 2})),
                                      MatMul(q, Transpose(k, attr<"perm"> = Perm{0, 2, 3, 1}))),
                               keys_transposed));
    else
      return named<'Q'>(either(MatMul(q, Transpose(k, attr<"perm"> = Perm{0, 2, 1})), keys_transposed));
  }();
  auto scores = scaled(q_k);
  auto mask = masked(scores);
  auto cut_mask = masked_by_where(scores);
  auto by_mask = weighted(mask);
  auto by_cut_mask = weighted(cut_mask);
  auto unmasked = weighted(scores);
  // What the conditions find and the replacements read again, kept (computed once per match).
  auto scale = keep<'a'>(attention_scale(scores, q_k));
  auto bias = keep<'b'>(attention_bias(mask, scores));
  auto causal = keep<'c'>(causal_bias(mask, scores));
  auto table = keep<'t'>(mask_table(mask, scores));
  auto cut_table = keep<'t'>(mask_table(cut_mask, scores));
  auto factor = value_of(scale);
  auto fits_any = opset_fits && is_activation_float(q) && has_value(scale);

  if constexpr (Heads == AttentionHeads::Split) {
    Var<'h'> hidden_shape;
    auto heads_merged = [&](const auto& product) {
      return named<'R'>(Reshape(Transpose(product, attr<"perm"> = analysis::heads_swap()), hidden_shape));
    };
    auto heads = heads_merged(unmasked);
    auto fits = fits_any && heads_fit(q, k, v, q_k, heads);
    auto rows_or_not = [&](const auto& attention) {
      return choose(flattens_rows(heads), Reshape(attention, fold(rows_shape(heads))), attention);
    };
    if constexpr (Masks == AttentionMasks::KeyPadding) {
      auto per_query = [&](const auto& bias) { return Expand(bias, fold(query_rows(scores))); };
      const auto not_causal = rewrite::lift(false);
      return rule(name).priority(2).cases(
          match(heads_merged(by_mask))
              .when(is_last_axis(axis, mask) && fits && pads_keys(mask, m, scores))
              .to(rows_or_not(Write::heads(q, k, v, q_k, factor, per_query(m), not_causal, nan_guarded(by_mask)))),
          match(heads_merged(by_cut_mask))
              .when(is_last_axis(axis, cut_mask) && fits && padding_where(cut_mask, condition, scores))
              .to(rows_or_not(Write::heads(q, k, v, q_k, factor, per_query(where_bias(cut_mask, scores)),
                                           not_causal, nan_guarded(by_cut_mask)))));
    } else
      return rule(name).priority(2).cases(
          match(heads_merged(by_mask))
              .when(
                  is_last_axis(axis, mask) && fits &&
                  (has_value(bias) || passes_as_bias(mask, m, scores) || runtime_bias(mask, table) || causal))
              .to(rows_or_not(Write::heads(q, k, v, q_k, factor,
                                           choose(has_value(bias), fold(value_of(bias)),
                                                  choose(runtime_bias(mask, table), bias_4d(m), m)),
                                           causal || causal_cut(mask, scores, table), nan_guarded(by_mask)))),
          match(heads_merged(by_cut_mask))
              .when(is_last_axis(axis, cut_mask) && fits && runtime_mask(cut_table))
              .to(rows_or_not(Write::heads(q, k, v, q_k, factor, where_bias(cut_mask, scores),
                                           causal_cut(cut_mask, scores, cut_table),
                                           nan_guarded(by_cut_mask)))),
          match(heads)
              .when(is_last_axis(axis, scores) && fits)
              .to(rows_or_not(Write::heads(q, k, v, q_k, factor))));
  } else {
    auto fits = fits_any && single_head_fits(q, k, v);
    return rule(name).priority(2).cases(
        match(by_mask)
            .when(is_last_axis(axis, mask) && fits && (has_value(bias) || causal))
            .to(Write::single(q, k, v, factor, fold(value_of(bias)), causal, nan_guarded(by_mask))),
        match(by_cut_mask)
            .when(is_last_axis(axis, cut_mask) && fits && runtime_mask(cut_table))
            .to(Write::single(q, k, v, factor, where_bias(cut_mask, scores),
                              causal_cut(cut_mask, scores, cut_table), nan_guarded(by_cut_mask))),
        match(unmasked).when(is_last_axis(axis, scores) && fits).to(Write::single(q, k, v, factor)));
  }
}

// ONNX's Attention in its 3-D form: Q, K and V all 3-D, the heads merged; is_causal for a causal mask.
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
  // Keys and values go back to 3-D; grouped ones (grouped_kv_heads) from before their repeat, which the
  // node does itself (kv_num_heads).
  template <class X>
  static auto unrepeated(const X& x) {
    using namespace rewrite::dsl;
    auto before = found(before_repeat(x, kept_repeat(x)));
    return choose(repeats_3d(kept_repeat(x)), before, merge_heads(before));
  }
  template <class K, class V, class QK>
  static auto key(const K& k, const V& v, const QK& q_k) {
    using namespace rewrite::dsl;
    return choose(has_value(kv_groups(k, v, q_k)), unrepeated(k),
                  choose(keys_in_bsnh(q_k), Reshape(k, fold(merged_bsnh_shape(k))), merge_heads(k)));
  }
  template <class K, class V, class QK>
  static auto value(const K& k, const V& v, const QK& q_k) {
    using namespace rewrite::dsl;
    return choose(has_value(kv_groups(k, v, q_k)), unrepeated(v), merge_heads(v));
  }
  template <class Q, class K, class V, class QK, class Scale>
  static auto heads(const Q& q, const K& k, const V& v, const QK& q_k, const Scale& scale) {
    return node(merge_heads(q), key(k, v, q_k), value(k, v, q_k), heads_of(q),
                kv_heads_of(q, kv_groups(k, v, q_k)), scale);
  }
  // Attention gives fully masked rows 0 itself: `guarded` asks nothing more.
  template <class Q, class K, class V, class QK, class Scale, class Mask, class Causal, class Guarded>
  static auto heads(const Q& q, const K& k, const V& v, const QK& q_k, const Scale& scale, const Mask& mask,
                    const Causal& causal, const Guarded&) {
    return masked(merge_heads(q), key(k, v, q_k), value(k, v, q_k), heads_of(q),
                  kv_heads_of(q, kv_groups(k, v, q_k)), scale, mask, causal);
  }
  template <class Q, class K, class V, class Scale>
  static auto single(const Q& q, const K& k, const V& v, const Scale& scale) {
    return node(q, k, v, 1, 1, scale);
  }
  template <class Q, class K, class V, class Scale, class Mask, class Causal, class Guarded>
  static auto single(const Q& q, const K& k, const V& v, const Scale& scale, const Mask& mask,
                     const Causal& causal, const Guarded&) {
    return masked(q, k, v, 1, 1, scale, mask, causal);
  }
};

}  // namespace detail

inline rewrite::RulePtr attention_rule() {
  return detail::scaled_dot_product_attention<detail::WriteOnnxAttention, detail::AttentionHeads::Split>(
      "Attention", rewrite::opset_at_least(23));
}

// AttentionOneHead: the same for one head on 3-D Q, K, V (batch, sequence, size), Attention with one head.
inline rewrite::RulePtr attention_one_head_rule() {
  return detail::scaled_dot_product_attention<detail::WriteOnnxAttention, detail::AttentionHeads::One>(
      "AttentionOneHead", rewrite::opset_at_least(23));
}

}  // namespace xexp::patterns
