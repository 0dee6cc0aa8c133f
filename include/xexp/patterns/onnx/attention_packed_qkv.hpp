#pragma once
// AttentionPackedQkv (default set) and MultiHeadAttentionPackedQkv (onnxruntime set): ViT and timm
// project q, k and v with one MatMul, then
//   qkv = Transpose(Reshape(x, (batch, sequence, 3, heads, head_size)), 2,0,3,1,4)
//   q, k, v = Squeeze(Split(qkv, axis=0)), one element each
// and the attention rule gives MultiHeadAttention the query merged back by Transpose + Reshape, keys and
// values in (batch, heads, sequence, head_size); it gives ONNX's Attention (opset 23) all three merged so
// (its 3-D form). All of it is a Split of x's last axis in three, each piece (batch, sequence, hidden) as
// both read it: the 5-D Reshape, the Transposes, the Squeezes and the merges go (eight nodes become two
// for MultiHeadAttention, twelve for Attention).
#include <cstdint>
#include <optional>
#include <vector>

#include "xexp/patterns/analysis/heads_layout.hpp"

namespace xexp::patterns {

namespace attention {
// packed, (batch, sequence, 3, heads, head_size) with the last three static, splits x's last axis only.
inline bool packs_last_axis(const ValueView& x, const ValueView& packed) {
  if (!x.shape() || x.shape()->empty() || !packed.shape() || packed.shape()->size() != 5) return false;
  const Shape& p = *packed.shape();
  const Dim last = x.shape()->back();
  return p[2].is_static() && p[2].value() == 3 && p[3].is_static() && p[4].is_static() && last.is_static() &&
         last.value() == 3 * p[3].value() * p[4].value();
}
// Squeeze s drops the first axis of its input, a piece of one element.
inline bool drops_first_axis(const ir::Graph& g, const ir::Node& s) {
  const std::optional<Shape>&in = g.value(s.inputs[0]).shape, &out = g.value(s.outputs[0]).shape;
  return in && out && out->size() + 1 == in->size() && (*in)[0].is_static() && (*in)[0].value() == 1;
}
// The value under a merge of heads, Reshape(Transpose(y, 0,2,1,3)) to 3-D, each read once: y, or kNone.
inline ir::ValueId unmerged(const ir::Graph& g, ir::ValueId merged) {
  const ir::Node* reshape = producer_of(g, merged, "Reshape");
  if (!reshape || !g.value(merged).shape || g.value(merged).shape->size() != 3) return ir::kNone;
  const ir::Value& swapped = g.value(reshape->inputs[0]);
  const ir::Node* transpose = producer_of(g, reshape->inputs[0], "Transpose");
  if (!transpose || swapped.uses.size() != 1 || swapped.is_graph_output()) return ir::kNone;
  const ir::Attribute* perm = transpose->attribute(Symbol("perm"));
  return perm && perm->ints == analysis::heads_swap() ? transpose->inputs[0] : ir::kNone;
}
// The Split `unbound` has three outputs; q (its first, squeezed), k and v are each the Squeeze of one of
// them that drops the split axis (`merged`: under a merge of heads), k and v read by the attention alone;
// x's last axis is what the Reshape under the Split packs.
inline constexpr auto unbinds_packed_qkv = rewrite::fact<"unbinds_packed_qkv">(
    [](const ValueView& unbound, const ValueView& q, const ValueView& k, const ValueView& v,
       const ValueView& x, const ValueView& packed, bool merged) {
      const ir::Graph& g = *unbound.graph;
      const ir::Node& split = rewrite::node_of(unbound);
      if (split.outputs.size() != 3 || !packs_last_axis(x, packed)) return false;
      const ir::ValueId pieces[3] = {q.id, k.id, v.id};
      for (std::size_t j = 0; j < 3; ++j) {
        if (j > 0) {
          const ir::Value& read = g.value(pieces[j]);
          if (read.is_graph_output() || read.uses.size() != 1) return false;
        }
        const ir::ValueId squeezed = j > 0 && merged ? unmerged(g, pieces[j]) : pieces[j];
        if (squeezed == ir::kNone) return false;
        const ir::Value& piece = g.value(squeezed);
        if (piece.producer == ir::kNone || piece.is_graph_output() || (j > 0 && piece.uses.size() != 1))
          return false;
        const ir::Node& squeeze = g.node(piece.producer);
        if (squeeze.op_type != Symbol("Squeeze") || !squeeze.domain.empty() ||
            squeeze.inputs[0] != split.outputs[j] || !drops_first_axis(g, squeeze))
          return false;
      }
      return true;
    });
// Reshape's shape for x as (batch, sequence, 3 * hidden): the packed shape's first two entries (a 0 or -1
// there reads as before: the leading axes are the same) and the last three multiplied.
inline constexpr auto packed_rows_shape = rewrite::fact<"packed_rows_shape">([](const Tensor& packed_shape) {
  const std::vector<int64_t> s = *int_values(packed_shape);
  return int64_tensor({s[0], s[1], s[2] * s[3] * s[4]});
});
inline constexpr auto packed_shape_fits = rewrite::fact<"packed_shape_fits">([](const Tensor& packed_shape) {
  const std::optional<std::vector<int64_t>> s = int_values(packed_shape);
  return s && s->size() == 5 && (*s)[2] > 0 && (*s)[3] > 0 && (*s)[4] > 0;
});
// Split's sizes: three pieces of heads * head_size.
inline constexpr auto packed_thirds = rewrite::fact<"packed_thirds">([](const ValueView& x) {
  const int64_t hidden = x.shape()->back().value() / 3;
  return int64_tensor({hidden, hidden, hidden});
});
}  // namespace attention

// The rule for one attention op: `merged` when it reads keys and values merged to 3-D too (Attention).
template <rewrite::FixedString Op, rewrite::FixedString Domain, bool Merged>
rewrite::RulePtr packed_qkv_rule(const char* name) {
  using namespace rewrite::dsl;
  using Perm = std::vector<int64_t>;
  Var<'x'> x;
  Const<'p'> packed_shape;
  Var<'k'> k;
  Var<'v'> v;
  Var<'h'> hidden_shape;
  auto packed = named<'P'>(Reshape(x, packed_shape, attr<"allowzero"> = 0));
  // The Split's other pieces, k and v, are read outside the match: they go with the attention's inputs.
  auto unbound =
      named<'U'>(shared(Split(Transpose(packed, attr<"perm"> = Perm{2, 0, 3, 1, 4}), etc, attr<"axis"> = 0)));
  auto q = named<'Q'>(Squeeze(unbound, etc));
  auto merged_q = Reshape(Transpose(q, attr<"perm"> = analysis::heads_swap()), hidden_shape);
  auto attention = named<'R'>(op<Op, Domain>(merged_q, k, v, etc));
  auto pieces = let<'S'>(outputs<3>(Split(Reshape(x, fold(attention::packed_rows_shape(packed_shape))),
                                          fold(attention::packed_thirds(x)), attr<"axis"> = -1)));
  return rule(name)
      .priority(2)
      .match(attention)
      .when(rewrite::opset_at_least(13) && attention::packed_shape_fits(packed_shape) &&
            attention::unbinds_packed_qkv(unbound, q, k, v, x, packed, Merged))
      .to(rebuild(attention, input<0> = pieces, input<1> = output<1>(pieces), input<2> = output<2>(pieces)));
}

inline rewrite::RulePtr attention_packed_qkv_rule() {
  return packed_qkv_rule<"Attention", "", true>("AttentionPackedQkv");
}

}  // namespace xexp::patterns
