#pragma once
// ShapeBasedConcatExpand: Expand(X, Concat(d0, ..., dn-1)), a shape assembled from one 1-element part
// per axis, whose output differs from X on one axis k only (the others known equal, symbolic or not):
// Expand keeps X's dimension where it is given 1, so every part but dk becomes the constant 1 and what
// computed them (Shape, Gather, ...) can go. ShapeBasedStaticExpand does it when the new dimension is
// static; this one keeps a dynamic dk.
#include <optional>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace detail {
// The one axis where the Expand's output may differ from x, when the shape is a Concat of one
// 1-element part per axis of the same rank and some other part is not already the constant 1.
inline std::optional<std::size_t> only_changing_part(const ValueView& x, const ValueView& expand,
                                                     const ValueView& concat) {
  const ir::Node& c = rewrite::node_of(concat);
  if (!x.shape() || !expand.shape() || x.shape()->size() != expand.shape()->size() ||
      c.inputs.size() != x.shape()->size())
    return std::nullopt;
  std::optional<std::size_t> changing;
  for (std::size_t k = 0; k < c.inputs.size(); ++k) {
    const std::optional<Shape>& part = concat.graph->value(c.inputs[k]).shape;
    if (!part || part->size() != 1 || !(rewrite::facts::KnownDim{(*part)[0]} == 1)) return std::nullopt;
    if (rewrite::facts::KnownDim{(*x.shape())[k]} == rewrite::facts::KnownDim{(*expand.shape())[k]}) continue;
    if (changing) return std::nullopt;
    changing = k;
  }
  if (!changing) return std::nullopt;
  for (std::size_t k = 0; k < c.inputs.size(); ++k)
    if (k != *changing && int_constant(*concat.graph, c.inputs[k]) != std::vector<int64_t>{1})
      return changing;
  return std::nullopt;
}
inline constexpr auto has_one_changing_part = rewrite::fact<"has_one_changing_part">(
    [](const ValueView& x, const ValueView& expand, const ValueView& concat) {
      return only_changing_part(x, expand, concat).has_value();
    });
}  // namespace detail

inline rewrite::RulePtr shape_based_concat_expand_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  auto concat = named<'c'>(Concat(etc));
  auto expand = named<'e'>(Expand(x, concat));
  // A lambda: the new Concat has as many inputs as the old one, which a node pattern cannot say.
  auto ones_but_changing = [](Rewriter& r, const ValueView& x, const ValueView& e,
                              const ValueView& c) -> std::optional<ir::ValueId> {
    const std::size_t changing = *detail::only_changing_part(x, e, c);
    std::vector<ir::ValueId> parts = rewrite::node_of(c).inputs;
    const ir::ValueId one = r.initializer(int64_tensor({1}));
    for (std::size_t k = 0; k < parts.size(); ++k)
      if (k != changing) parts[k] = one;
    const ir::ValueId shape =
        r.node(Symbol("Concat"), std::move(parts), {ir::Attribute::make_int(Symbol("axis"), 0)});
    return r.node(Symbol("Expand"), {x.id, shape});
  };
  return rule("ShapeBasedConcatExpand")
      .priority(1)
      .match(expand)
      .when(detail::has_one_changing_part(x, expand, concat))
      .to(replace_with("ones_but_changing", ones_but_changing, x, expand, concat));
}

}  // namespace xexp::patterns
