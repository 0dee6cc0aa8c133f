#pragma once
// ConcatReshape: Reshape(X, Concat(parts)) where every part is a constant without -1 or a (1,) piece of a
// Shape (Shape, or Gather/Slice/Squeeze/Unsqueeze of a Shape, never -1): the last Shape-derived part
// becomes -1, which Reshape computes, so the Shape computation feeding it can go. The result is a
// constant shape when no other Shape-derived part remains. Needs allowzero=0 (see
// static_concat_reshape.hpp for the zero-size caveat).
#include "xexp/patterns/onnx/static_concat_reshape.hpp"

namespace xexp::patterns {

namespace detail {
inline bool is_shape_derived(const ir::Graph& g, ir::ValueId v) {
  const ir::Value& value = g.value(v);
  if (value.producer == ir::kNone) return false;
  const ir::Node& n = g.node(value.producer);
  if (!n.domain.empty()) return false;
  if (n.op_type == Symbol("Shape")) return true;
  for (const char* op : {"Gather", "Slice", "Squeeze", "Unsqueeze"})
    if (n.op_type == Symbol(op)) return !n.inputs.empty() && n.inputs[0] != ir::kNone && is_shape_derived(g, n.inputs[0]);
  return false;
}
// The index of the last Shape-derived part, or -1 when a part is neither kind or a constant holds -1.
inline int64_t last_shape_part(const rewrite::ValueView& reshape, const rewrite::ValueView& concat) {
  if (reshape_allows_zero(reshape)) return -1;
  const ir::Graph& g = *concat.graph;
  const ir::Node& n = node_of(concat);
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
}
}  // namespace detail

inline rewrite::RulePtr concat_reshape_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  // variadic: see static_concat_reshape.hpp.
  auto concat = shared_variadic<'c', "Concat">();
  auto reshape = variadic<'r', "Reshape">(x, concat);
  return rule("ConcatReshape")
      .match(reshape)
      .when(call("last_shape_part", detail::last_shape_part, reshape, concat) >= 0)
      .to(replace_with("reshape_with_minus_one",
                       [](Rewriter& r, const ValueView& input, const ValueView& re, const ValueView& c)
                           -> std::optional<ir::ValueId> {
                         return detail::reshape_with_minus_one(r, input.id, node_of(c).inputs,
                                                               static_cast<std::size_t>(detail::last_shape_part(re, c)));
                       },
                       x, reshape, concat));
}

}  // namespace xexp::patterns
