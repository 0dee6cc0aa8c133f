#pragma once
// ConcatReshape: Reshape(X, Concat(parts)) where every part is a constant without -1 or a (1,) piece of a
// Shape (Shape, or Gather/Slice/Squeeze/Unsqueeze of a Shape, never -1): the last Shape-derived part
// becomes -1, which Reshape computes, so the Shape computation feeding it can go. The result is a
// constant shape when no other Shape-derived part remains. Needs allowzero=0 (see
// static_concat_reshape.hpp for the zero-size caveat).
#include "xexp/patterns/onnx/static_concat_reshape.hpp"

namespace xexp::patterns {

namespace reshape {
inline bool is_shape_derived(const ir::Graph& g, ir::ValueId v) {
  const ir::Value& value = g.value(v);
  if (value.producer == ir::kNone) return false;
  const ir::Node& n = g.node(value.producer);
  if (!n.domain.empty()) return false;
  if (n.op_type == Symbol("Shape")) return true;
  for (const char* op : {"Gather", "Slice", "Squeeze", "Unsqueeze"})
    if (n.op_type == Symbol(op))
      return !n.inputs.empty() && n.inputs[0] != ir::kNone && is_shape_derived(g, n.inputs[0]);
  return false;
}
// The index of the last Shape-derived part, or -1 when a part is neither kind or a constant holds -1.
inline constexpr auto last_shape_part =
    rewrite::fact<"last_shape_part">([](const ValueView& reshape, const ValueView& concat) -> int64_t {
      if (reshape_allows_zero(reshape)) return -1;
      const ir::Graph& g = *concat.graph;
      const ir::Node& n = rewrite::node_of(concat);
      int64_t last = -1;
      for (std::size_t k = 0; k < n.inputs.size(); ++k) {
        if (std::optional<std::vector<int64_t>> values = int_constant(g, n.inputs[k])) {
          if (std::find(values->begin(), values->end(), -1) != values->end()) return -1;
          continue;
        }
        if (!is_one_element_int64(g.value(n.inputs[k])) || !is_shape_derived(g, n.inputs[k])) return -1;
        last = static_cast<int64_t>(k);
      }
      return last;
    });
}  // namespace reshape

inline rewrite::RulePtr concat_reshape_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  auto concat = named<'c'>(shared(Concat(etc)));
  auto reshape = named<'r'>(Reshape(x, concat));
  auto last = keep<'l'>(reshape::last_shape_part(reshape, concat));
  auto shape = keep<'s'>(reshape::constant_shape(concat, last));
  return rule("ConcatReshape")
      .match(reshape)
      .when(last >= 0)
      .to(reshape::reshape_with_minus_one(x, concat, last, shape));
}

}  // namespace xexp::patterns
