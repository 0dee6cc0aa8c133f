#pragma once
// MultiHeadAttentionBias (onnxruntime set): the biases of the query, key and value projections go into
// MultiHeadAttention's bias input, which packs them (q's, then k's, then v's). Two spellings:
// - separate projections (BERT): MHA(q + bq, k + bk, v + bv) = MHA(q, k, v, bias=[bq, bk, bv]), the
//   three vectors joined at rewrite time when they are constants, by a Concat otherwise;
// - one packed projection cut in three (ViT, after MultiHeadAttentionPackedQkv):
//   MHA(Split(y + c)) = MHA(Split(y), bias=c).
// The projections then stay MatMuls instead of MatMulAdd's Reshape, Gemm, Reshape. Query, key and value
// must be 3-D (ONNX Runtime adds the bias to those only) and each bias a vector over the last axis.
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace attention {
// k and v are the second and third pieces of the Split whose first piece is `first`, and it has no other.
inline constexpr auto other_two_pieces =
    rewrite::fact<"other_two_pieces">([](const ValueView& first, const ValueView& k, const ValueView& v) {
      const ir::Node& split = rewrite::node_of(first);
      return split.outputs.size() == 3 && split.outputs[1] == k.id && split.outputs[2] == v.id;
    });
inline constexpr auto has_no_bias = rewrite::fact<"has_no_bias">(
    [](const ValueView& attention) { return rewrite::input_of(attention, 3) == ir::kNone; });
inline constexpr auto all_constant =
    rewrite::fact<"all_constant">([](const ValueView& a, const ValueView& b, const ValueView& c) {
      return a.constant() && b.constant() && c.constant();
    });
inline constexpr auto joined_biases =
    rewrite::fact<"joined_biases">([](const ValueView& a, const ValueView& b, const ValueView& c) {
      return concatenated({a.constant(), b.constant(), c.constant()}, 0);
    });
}  // namespace attention

inline rewrite::RulePtr multi_head_attention_bias_rule() {
  using namespace rewrite::dsl;
  Var<'q'> q;
  Var<'k'> k;
  Var<'v'> v;
  Var<'Q'> q_bias;
  Var<'K'> k_bias;
  Var<'V'> v_bias;
  Var<'y'> y;
  Var<'s'> sizes;
  Int<'a'> axis;
  // The masks and the other inputs after the bias stay as they are.
  auto separate = named<'R'>(op<"MultiHeadAttention", "com.microsoft">(
      commutative(Add(q, q_bias)), commutative(Add(k, k_bias)), commutative(Add(v, v_bias)), etc));
  auto first = named<'U'>(Split(commutative(Add(y, q_bias)), sizes, attr<"axis"> = axis));
  auto packed = named<'P'>(op<"MultiHeadAttention", "com.microsoft">(first, k, v, etc));
  auto pieces = let<'S'>(outputs<3>(Split(y, sizes, attr<"axis"> = axis)));
  auto each_over_last_axis = absent_or_vector_over_last_axis(q_bias, q) &&
                             absent_or_vector_over_last_axis(k_bias, k) &&
                             absent_or_vector_over_last_axis(v_bias, v);
  return rule("MultiHeadAttentionBias")
      .priority(2)
      .cases(match(separate)
                 .when(attention::has_no_bias(separate) && rank(q) == 3 && rank(k) == 3 && rank(v) == 3 &&
                       each_over_last_axis)
                 .to(rebuild(separate, input<0> = q, input<1> = k, input<2> = v,
                             input<3> = choose(attention::all_constant(q_bias, k_bias, v_bias),
                                               fold(attention::joined_biases(q_bias, k_bias, v_bias)),
                                               Concat(q_bias, k_bias, v_bias, attr<"axis"> = 0)))),
             match(packed)
                 .when(attention::has_no_bias(packed) && rank(y) == 3 && is_last_axis(axis, y) &&
                       absent_or_vector_over_last_axis(q_bias, y) && attention::other_two_pieces(first, k, v))
                 .to(rebuild(packed, input<0> = pieces, input<1> = output<1>(pieces),
                             input<2> = output<2>(pieces), input<3> = q_bias)));
}

}  // namespace xexp::patterns
