#pragma once
// ConcatGather: Gather([i]) of a Concat of (1,)-shaped parts (a shape being assembled) is part i.
#include "xexp/patterns/constant_facts.hpp"
#include "xexp/patterns/variadic_node.hpp"

namespace xexp::patterns {

namespace detail {
// The part picked, or kNone when the index or a part does not have shape (1,).
inline ir::ValueId picked_concat_part(const rewrite::ValueView& concat, const Tensor& index) {
  const ir::Node& n = node_of(concat);
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
}  // namespace detail

inline rewrite::RulePtr concat_gather_rule() {
  using namespace rewrite::dsl;
  Const<'i'> index;
  // variadic: a Concat has any number of inputs.
  auto concat = shared_variadic<'c', "Concat">();
  auto picked = call("picked_part", detail::picked_concat_part, concat, index);
  return rule("ConcatGather")
      .match(op<"Gather">(concat, index, attr<"axis"> = 0))
      .when(picked != ir::kNone)
      .to(replace_with("part", [](Rewriter&, const ValueView& c, const Tensor& i) -> std::optional<ir::ValueId> {
        return detail::picked_concat_part(c, i);
      }, concat, index));
}

}  // namespace xexp::patterns
