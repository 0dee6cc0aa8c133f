#pragma once
// The matcher the attention rules share (onnx/attention.hpp, ort/multi_head_attention.hpp): scaled
// dot-product attention as exporters write it, its cases by mask, and what each case hands its writer.
#include <vector>

#include "xexp/patterns/onnx/attention_grouped_heads.hpp"
#include "xexp/patterns/onnx/attention_mask_facts.hpp"
#include "xexp/patterns/onnx/attention_scores.hpp"

namespace xexp::patterns::attention {

// Which attentions a rule fuses: heads split from and merged back to (batch, sequence, hidden) values, or
// one head on 3-D values. They are two rules because a single head gains least from fusing: ONNX Runtime
// 1.30's CPU MultiHeadAttention of one head is slower than the four nodes it replaces (bench/README.md).
enum class AttentionHeads { Split, One };
// Which masks: the ones written per (query, key) pair or causal, or only key padding masks read from the
// inputs (one row for all queries), a rule of their own: MultiHeadAttention with such a bias runs slower
// than the nodes it replaces on ONNX Runtime 1.30's CPU provider (bench/README.md).
enum class AttentionMasks { PerPair, KeyPadding };

// The rule `name`, where `opset_fits` holds. Write::heads(q, k, v, q_k, scale[, mask, causal, weights])
// writes the attention of q, k, v split in heads (k in (batch, sequence, heads, head_size) when
// keys_in_bsnh(q_k)), merged to (batch, sequence, hidden); Write::single(q, k, v, scale[, mask, causal,
// weights]) that of one head on 3-D values. The mask is additive, (batch|1, heads|1, sequence, total);
// `causal` tells whether it is exactly causal (causal_bias, causal_cut); `weights` is W, whose fully
// masked rows must give 0 when torch's safe softmax guards them (nan_guarded(W)). What several cases or
// branches read is named (scale, fits, ...), so that the catalogue prints it once.
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
    return named<"where_bias">(choose(keeps_scores_where_true(mask, scores),
                                      Where(condition, fold(zero_bias(scores)), m),
                                      Where(condition, m, fold(zero_bias(scores)))));
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
  auto scale = keep<"scale">(attention_scale(scores, q_k));
  auto bias = keep<"bias">(attention_bias(mask, scores));
  auto causal = keep<"causal">(causal_bias(mask, scores));
  auto table = keep<"table">(mask_table(mask, scores));
  auto cut_table = keep<"table">(mask_table(cut_mask, scores));
  auto factor = value_of(scale);

  if constexpr (Heads == AttentionHeads::Split) {
    Var<'h'> hidden_shape;
    auto heads_merged = [&](const auto& product) {
      return named<'R'>(
          either(Reshape(Transpose(product, attr<"perm"> = analysis::heads_swap()), hidden_shape),
                 Reshape(product, hidden_shape)));  // a sequence of one (heads_fit)
    };
    auto heads = heads_merged(unmasked);
    auto shapes_fit =
        named<"split_fits">(is_activation_float(q) && has_value(scale) && heads_fit(q, k, v, q_k, heads));
    auto fits = named<"fits">(opset_fits && shapes_fit);
    if constexpr (Masks == AttentionMasks::KeyPadding) {
      // A key padding mask is never causal: the writer's biased node alone.
      auto per_query = [&](const auto& bias) { return Expand(bias, fold(query_rows(scores))); };
      return rule(name).priority(2).cases(
          match(heads_merged(by_mask))
              .when(is_last_axis(axis, mask) && fits && pads_keys(mask, m, scores))
              .to(in_rows(heads, Write::biased_heads(q, k, v, q_k, factor, per_query(m), by_mask))),
          match(heads_merged(by_cut_mask))
              .when(is_last_axis(axis, cut_mask) && fits && padding_where(cut_mask, condition, scores))
              .to(in_rows(heads, Write::biased_heads(q, k, v, q_k, factor,
                                                     per_query(where_bias(cut_mask, scores)), by_cut_mask))));
    } else {
      // The mask as an additive bias, and whether it passes as one.
      auto mask_bias = named<"mask_bias">(
          choose(has_value(bias), fold(value_of(bias)), choose(runtime_bias(mask, table), bias_4d(m), m)));
      auto bias_fits = named<"bias_fits">(has_value(bias) || passes_as_bias(mask, m, scores) ||
                                          runtime_bias(mask, table) || causal);
      return rule(name).priority(2).cases(
          match(heads_merged(by_mask))
              .when(is_last_axis(axis, mask) && fits && bias_fits)
              .to(in_rows(heads, Write::heads(q, k, v, q_k, factor, mask_bias,
                                              causal || causal_cut(mask, scores, table), by_mask))),
          match(heads_merged(by_cut_mask))
              .when(is_last_axis(axis, cut_mask) && fits && runtime_mask(cut_table))
              .to(in_rows(heads, Write::heads(q, k, v, q_k, factor, where_bias(cut_mask, scores),
                                              causal_cut(cut_mask, scores, cut_table), by_cut_mask))),
          match(heads)
              .when(is_last_axis(axis, scores) && fits)
              .to(in_rows(heads, Write::heads(q, k, v, q_k, factor))));
    }
  } else {
    auto shapes_fit =
        named<"one_head_fits">(is_activation_float(q) && has_value(scale) && single_head_fits(q, k, v));
    auto fits = named<"fits">(opset_fits && shapes_fit);
    return rule(name).priority(2).cases(
        match(by_mask)
            .when(is_last_axis(axis, mask) && fits && (has_value(bias) || causal))
            .to(Write::single(q, k, v, factor, fold(value_of(bias)), causal, by_mask)),
        match(by_cut_mask)
            .when(is_last_axis(axis, cut_mask) && fits && runtime_mask(cut_table))
            .to(Write::single(q, k, v, factor, where_bias(cut_mask, scores),
                              causal_cut(cut_mask, scores, cut_table), by_cut_mask)),
        match(unmasked).when(is_last_axis(axis, scores) && fits).to(Write::single(q, k, v, factor)));
  }
}

}  // namespace xexp::patterns::attention
