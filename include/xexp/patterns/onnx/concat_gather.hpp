#pragma once
// ConcatGather: Gather([i]) of a Concat of (1,)-shaped parts (a shape being assembled) is part i.
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace concat {
// Part i, or kNone when the index or a part does not have shape (1,).
inline ir::ValueId picked_concat_part(const ValueView& concat, const Tensor& index) {
  const ir::Node& n = rewrite::node_of(concat);
  if (index.dims() != std::vector<int64_t>{1} || !is_integer_type(index.type())) return ir::kNone;
  for (ir::ValueId part : n.inputs) {
    const std::optional<Shape>& s = concat.graph->value(part).shape;
    if (!s || s->size() != 1 || !((*s)[0] == Dim(1))) return ir::kNone;
  }
  const auto count = static_cast<int64_t>(n.inputs.size());
  int64_t i = eval::as_int64s(index)[0];
  if (i < 0) i += count;
  return i >= 0 && i < count ? n.inputs[i] : ir::kNone;
}
inline constexpr auto picked_part = rewrite::fact<"picked_part">(picked_concat_part);
}  // namespace concat

inline rewrite::RulePtr concat_gather_rule() {
  using namespace rewrite::dsl;
  Const<'i'> index;
  auto concat = named<'c'>(shared(Concat(etc)));
  auto picked = keep<'p'>(concat::picked_part(concat, index));
  return rule("ConcatGather")
      .match(Gather(concat, index, attr<"axis"> = 0))
      .when(picked != ir::kNone)
      .to(found(picked));
}

}  // namespace xexp::patterns
