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

namespace shape {
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
inline constexpr auto changing_part = rewrite::fact<"changing_part">(only_changing_part);
inline constexpr auto has_one_changing_part = rewrite::fact<"has_one_changing_part">(
    [](const std::optional<std::size_t>& changing) { return changing.has_value(); });
// The Concat's parts, each but the changing one replaced by the constant 1.
inline constexpr auto ones_but =
    rewrite::fact<"ones_but">([](const ValueView& concat, const std::optional<std::size_t>& changing) {
      const std::vector<ir::ValueId>& inputs = rewrite::node_of(concat).inputs;
      std::vector<rewrite::Part> parts;
      for (std::size_t k = 0; k < inputs.size(); ++k)
        parts.emplace_back(k == *changing ? rewrite::Part(inputs[k]) : rewrite::Part(int64_tensor({1})));
      return parts;
    });
}  // namespace shape

inline rewrite::RulePtr shape_based_concat_expand_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  auto concat = named<'c'>(Concat(etc));
  auto expand = named<'e'>(Expand(x, concat));
  auto changing = keep<'k'>(shape::changing_part(x, expand, concat));
  return rule("ShapeBasedConcatExpand")
      .priority(1)
      .match(expand)
      .when(shape::has_one_changing_part(changing))
      .to(Expand(x, Concat(spread(shape::ones_but(concat, changing)), attr<"axis"> = 0)));
}

}  // namespace xexp::patterns
