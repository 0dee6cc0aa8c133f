#pragma once
// ReduceArgTopK: ReduceMax(X) and ArgMax(X) over the same axis (the best score and its index) are the two
// outputs of TopK(X, k=1) (largest=1; ReduceMin and ArgMin: largest=0): one pass instead of two. TopK
// puts the lower index first among equal values, as ArgMax without select_last_index does. Both with
// keepdims=1: without it each output would need a Squeeze, more nodes than before.
// The TopK goes where the first of the two is, so that the readers of both come after it.
#include <cstdint>
#include <optional>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace detail {
// The pair to the reduction or arg node producing `v`: its op type, and the axis both must share.
struct ArgReducePair {
  Symbol reduce, arg;
  int64_t largest;
};
inline std::optional<ArgReducePair> arg_reduce_pair(Symbol op) {
  if (op == Symbol("ReduceMax") || op == Symbol("ArgMax"))
    return ArgReducePair{Symbol("ReduceMax"), Symbol("ArgMax"), 1};
  if (op == Symbol("ReduceMin") || op == Symbol("ArgMin"))
    return ArgReducePair{Symbol("ReduceMin"), Symbol("ArgMin"), 0};
  return std::nullopt;
}
// The one axis (made non-negative) n reduces with keepdims=1, or nullopt.
inline std::optional<int64_t> kept_axis(const ir::Graph& g, const ir::Node& n, int64_t rank) {
  if (int_attribute(n, "keepdims", 1) != 1) return std::nullopt;
  int64_t axis;
  if (n.op_type == Symbol("ArgMax") || n.op_type == Symbol("ArgMin")) {
    if (int_attribute(n, "select_last_index", 0) != 0) return std::nullopt;
    axis = int_attribute(n, "axis", 0);
  } else {
    const std::optional<std::vector<int64_t>> axes = ints_attribute_or_input(g, n, "axes", 1);
    if (!axes || axes->size() != 1 || int_attribute(n, "noop_with_empty_axes", 0) != 0) return std::nullopt;
    axis = (*axes)[0];
  }
  if (axis < 0) axis += rank;
  return axis >= 0 && axis < rank ? std::optional<int64_t>(axis) : std::nullopt;
}
// The partner of `root` (same X, same axis, the other op of the pair), when root comes first in the
// execution order; kNone otherwise.
inline ir::NodeId top_k_partner(const ValueView& root) {
  const ir::Graph& g = *root.graph;
  const ir::NodeId root_id = root.value().producer;
  const ir::Node& n = g.node(root_id);
  const std::optional<ArgReducePair> pair = arg_reduce_pair(n.op_type);
  const ir::ValueId x = n.inputs[0];
  const std::optional<Shape>& shape = g.value(x).shape;
  if (!pair || !shape) return ir::kNone;
  const auto rank = static_cast<int64_t>(shape->size());
  const std::optional<int64_t> axis = kept_axis(g, n, rank);
  if (!axis) return ir::kNone;
  const Symbol wanted = n.op_type == pair->reduce ? pair->arg : pair->reduce;
  ir::NodeId partner = ir::kNone;
  for (const ir::Use& u : g.value(x).uses) {
    const ir::Node& other = g.node(u.node);
    if (u.node != root_id && u.slot == 0 && other.op_type == wanted && other.domain.empty() &&
        kept_axis(g, other, rank) == axis && !g.value(other.outputs[0]).is_graph_output()) {
      partner = u.node;
      break;
    }
  }
  return partner != ir::kNone && first_in_order(g, root_id, x, {partner}) ? partner : ir::kNone;
}
inline constexpr auto has_later_partner = rewrite::fact<"has_later_partner">(
    [](const ValueView& root) { return top_k_partner(root) != ir::kNone; });

inline std::optional<ir::ValueId> fuse_into_top_k(rewrite::Rewriter& r, const ValueView& root) {
  const ir::NodeId partner = top_k_partner(root);
  if (partner == ir::kNone) return std::nullopt;
  const ir::Graph& g = r.graph();
  const ir::Node& n = g.node(root.value().producer);
  const ir::ValueId x = n.inputs[0];
  const int64_t axis = *kept_axis(g, n, static_cast<int64_t>(g.value(x).shape->size()));
  const ArgReducePair pair = *arg_reduce_pair(n.op_type);
  const bool root_is_reduce = n.op_type == pair.reduce;
  const ir::ValueId partner_out = g.node(partner).outputs[0];
  const ir::ValueId values = r.node(Symbol("TopK"), {x, r.initializer(int64_tensor({1}))},
                                    {ir::Attribute::make_int(Symbol("axis"), axis),
                                     ir::Attribute::make_int(Symbol("largest"), pair.largest),
                                     ir::Attribute::make_int(Symbol("sorted"), 1)},
                                    {}, 2);
  const ir::ValueId indices = r.graph().node(r.graph().value(values).producer).outputs[1];
  r.replace_later(partner_out, root_is_reduce ? indices : values);
  return root_is_reduce ? values : indices;
}
}  // namespace detail

inline rewrite::RulePtr reduce_arg_top_k_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  auto root = named<'r'>(op<"ReduceMax|ReduceMin|ArgMax|ArgMin">(x, etc));
  return rule("ReduceArgTopK")
      .priority(1)
      .match(root)
      .when(opset_at_least(11) && detail::has_later_partner(root))
      .to(replace_with("top_k", detail::fuse_into_top_k, root));
}

}  // namespace xexp::patterns
