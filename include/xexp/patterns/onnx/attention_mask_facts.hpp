#pragma once
// The masks the attention rules (onnx/attention.hpp) fuse, as facts on the matched scores: an additive
// bias folded from constants, a mask added as it is, a mask cut at run time from a table, a causal mask
// (is_causal), a key padding mask; and the safe softmax that zeroes fully masked rows.
#include <cmath>
#include <numeric>
#include <optional>
#include <vector>

#include "xexp/patterns/analysis/attention_masks.hpp"
#include "xexp/patterns/analysis/safe_softmax.hpp"

namespace xexp::patterns::attention {

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
inline constexpr auto bias_4d = rewrite::piece<"bias_4d">([](const auto& x) {
  using namespace rewrite::dsl;
  return choose(is_4d(x), x, Unsqueeze(x, attr<"axes"> = axes_to_4d(x)));
});
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

}  // namespace xexp::patterns::attention
