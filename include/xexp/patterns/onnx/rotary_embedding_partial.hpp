#pragma once
// RotaryEmbeddingPartial (opset >= 23): a rotation of the first r values of each head, written as
//   Concat(RotaryEmbedding(a, ...), b) of a, b = Split(x, [r, rest]) over x's last axis
// (Phi-3 and Phi-4 rotate 96 of their 128 head dims), is RotaryEmbedding(x, ..., rotary_embedding_dim=r),
// which leaves the other values of each head as they are. x is (batch, heads, sequence, head_size): the
// 4-D layout both RotaryEmbedding ops read. The onnxruntime set's ContribRotaryEmbeddingPartial is the
// same rule on com.microsoft RotaryEmbedding, which wants num_heads with rotary_embedding_dim (ONNX
// Runtime 1.30 refuses the node without it): x's heads.
#include <optional>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace rotary {
// a and b as the two outputs of one Split of x over its last axis, x 4-D, its heads and a's size on that
// axis static: x, else nullopt.
inline std::optional<ir::ValueId> split_source(const ValueView& a, const ValueView& b) {
  const ir::Graph& g = *a.graph;
  const ir::Value &first = a.value(), &second = b.value();
  if (first.producer == ir::kNone || first.producer != second.producer || first.output_index != 0 ||
      second.output_index != 1)
    return std::nullopt;
  const ir::Node& split = g.node(first.producer);
  if (split.op_type != Symbol("Split") || !split.domain.empty() || split.outputs.size() != 2 ||
      split.inputs.empty())
    return std::nullopt;
  const ir::ValueId x = split.inputs[0];
  const std::optional<Shape>& shape = g.value(x).shape;
  const ir::Attribute* axis = split.attribute(Symbol("axis"));
  if (!shape || shape->size() != 4 || !(*shape)[1].is_static() || !a.shape() || !(*a.shape())[3].is_static() ||
      !last_axis_of(axis ? axis->i : 0, ValueView{&g, x}))
    return std::nullopt;
  return x;
}
inline constexpr auto splits_last_axis = rewrite::fact<"splits_last_axis">(
    [](const ValueView& a, const ValueView& b) { return split_source(a, b).has_value(); });
inline constexpr auto split_input =
    rewrite::fact<"split_input">([](const ValueView& a, const ValueView& b) {
      return ValueView{a.graph, *split_source(a, b)};
    });
inline constexpr auto last_dim =
    rewrite::fact<"last_dim">([](const ValueView& a) { return (*a.shape())[3].value(); });
inline constexpr auto heads_dim =
    rewrite::fact<"heads_dim">([](const ValueView& a) { return (*a.shape())[1].value(); });
// The whole head rotated so far: no rotary_embedding_dim yet.
inline constexpr auto rotates_whole_heads = rewrite::fact<"rotates_whole_heads">([](const ValueView& r) {
  const ir::Node& n = node_of(r);
  const ir::Attribute* dim = n.attribute(Symbol("rotary_embedding_dim"));
  return !dim || dim->i == 0;
});

// The rule `name` on RotaryEmbedding of `Domain`, where `opset_fits` holds; com.microsoft's also gets
// num_heads.
template <rewrite::FixedString Domain, class OpsetFits>
rewrite::RulePtr partial_rotary(const char* name, OpsetFits opset_fits) {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Int<'A'> axis;
  auto rotary = named<'e'>(op<"RotaryEmbedding", Domain>(a, etc));
  auto rebuilt = [&] {
    if constexpr (Domain.view().empty())
      return rebuild(rotary, input<0> = found(split_input(a, b)), attr<"rotary_embedding_dim"> = last_dim(a));
    else
      return rebuild(rotary, input<0> = found(split_input(a, b)), attr<"rotary_embedding_dim"> = last_dim(a),
                     attr<"num_heads"> = heads_dim(a));
  };
  return rule(name)
      .priority(1)
      .match(Concat(rotary, b, attr<"axis"> = axis))
      .when(opset_fits && is_last_axis(axis, b) && splits_last_axis(a, b) && rotates_whole_heads(rotary))
      .to(rebuilt());
}
}  // namespace rotary

inline rewrite::RulePtr rotary_embedding_partial_rule() {
  return rotary::partial_rotary<"">("RotaryEmbeddingPartial", rewrite::opset_at_least(23));
}

}  // namespace xexp::patterns
