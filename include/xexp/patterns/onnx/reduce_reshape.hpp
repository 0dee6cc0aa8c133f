#pragma once
// ReduceReshape: Reduce*(X, keepdims=1) followed by a Reshape that only drops the reduced axes is
// Reduce*(X, keepdims=0). Checked on shapes: the Reshape's output is the reduction's output without the
// reduced axes (known dims only).
#include <algorithm>
#include <optional>
#include <vector>

#include "xexp/patterns/constant_facts.hpp"
#include "xexp/patterns/variadic_node.hpp"

namespace xexp::patterns {

namespace detail {
// The reduced axes (non-negative), or nullopt when they are not known or when the node reduces nothing.
inline std::optional<std::vector<int64_t>> reduced_axes(const rewrite::ValueView& reduce, int64_t rank) {
  const ir::Node& n = node_of(reduce);
  std::vector<int64_t> axes;
  if (const ir::Attribute* a = n.attribute(Symbol("axes"))) {
    axes = a->ints;
  } else if (input_of(reduce, 1) != ir::kNone) {
    std::optional<std::vector<int64_t>> values = int_constant(*reduce.graph, input_of(reduce, 1));
    if (!values) return std::nullopt;
    axes = *values;
  }
  if (axes.empty()) {
    const ir::Attribute* noop = n.attribute(Symbol("noop_with_empty_axes"));
    if (noop && noop->i != 0) return std::nullopt;
    for (int64_t k = 0; k < rank; ++k) axes.push_back(k);
  }
  for (int64_t& axis : axes) {
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return std::nullopt;
  }
  return axes;
}
inline bool reshape_drops_reduced_axes(const rewrite::ValueView& reduce, const rewrite::ValueView& reshaped) {
  if (!reduce.shape() || !reshaped.shape()) return false;
  const Shape& kept = *reduce.shape();
  std::optional<std::vector<int64_t>> axes = reduced_axes(reduce, static_cast<int64_t>(kept.size()));
  if (!axes) return false;
  Shape expected;
  for (std::size_t k = 0; k < kept.size(); ++k)
    if (std::find(axes->begin(), axes->end(), static_cast<int64_t>(k)) == axes->end()) expected.push_back(kept[k]);
  return rewrite::facts::same_shape(expected, *reshaped.shape());
}
inline std::optional<ir::ValueId> reduce_without_keepdims(rewrite::Rewriter& r, const rewrite::ValueView& reduce) {
  const ir::Node& n = node_of(reduce);
  std::vector<ir::Attribute> attributes;
  for (const ir::Attribute& a : n.attributes)
    if (a.name != Symbol("keepdims")) attributes.push_back(a);
  attributes.push_back(ir::Attribute::make_int(Symbol("keepdims"), 0));
  return r.node(n.op_type, n.inputs, std::move(attributes), n.domain);
}
}  // namespace detail

inline rewrite::RulePtr reduce_reshape_rule() {
  using namespace rewrite::dsl;
  Var<'s'> shape;
  auto reduce = variadic<'r', "ReduceSum|ReduceMean|ReduceMax|ReduceMin|ReduceProd|ReduceL1|ReduceL2|ReduceLogSum|"
                              "ReduceLogSumExp|ReduceSumSquare">(attr<"keepdims"> = 1);
  auto reshape = variadic<'o', "Reshape">(reduce, shape);
  return rule("ReduceReshape")
      .priority(1)
      .match(reshape)
      .when(call("reshape_drops_reduced_axes", detail::reshape_drops_reduced_axes, reduce, reshape))
      .to(replace_with("reduce_without_keepdims", detail::reduce_without_keepdims, reduce));
}

}  // namespace xexp::patterns
