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

namespace reduce {
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
// What TopK takes from the pair: the partner's output (same X, same axis, the other op of the pair),
// when root comes first in the execution order (kNone otherwise), the axis, largest, and which output
// of TopK each of the two reads.
struct TopKPair {
  ir::ValueId partner = ir::kNone;
  int64_t axis = 0, largest = 0;
  bool root_is_reduce = false;
};
inline TopKPair top_k_pair(const ValueView& root) {
  const ir::Graph& g = *root.graph;
  const ir::NodeId root_id = root.value().producer;
  const ir::Node& n = g.node(root_id);
  const std::optional<ArgReducePair> pair = arg_reduce_pair(n.op_type);
  const ir::ValueId x = n.inputs[0];
  const std::optional<Shape>& shape = g.value(x).shape;
  if (!pair || !shape) return {};
  const auto rank = static_cast<int64_t>(shape->size());
  const std::optional<int64_t> axis = kept_axis(g, n, rank);
  if (!axis) return {};
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
  if (partner == ir::kNone || !first_in_order(g, root_id, x, {partner})) return {};
  return {g.node(partner).outputs[0], *axis, pair->largest, n.op_type == pair->reduce};
}
inline constexpr auto top_k_pair_of = rewrite::fact<"top_k_pair_of">(top_k_pair);
inline constexpr auto has_later_partner =
    rewrite::fact<"has_later_partner">([](const TopKPair& p) { return p.partner != ir::kNone; });
inline constexpr auto partner_of = rewrite::fact<"partner_of">([](const TopKPair& p) { return p.partner; });
inline constexpr auto axis_of = rewrite::fact<"axis_of">([](const TopKPair& p) { return p.axis; });
inline constexpr auto largest_of = rewrite::fact<"largest_of">([](const TopKPair& p) { return p.largest; });
inline constexpr auto root_is_reduce =
    rewrite::fact<"root_is_reduce">([](const TopKPair& p) { return p.root_is_reduce; });
}  // namespace reduce

inline rewrite::RulePtr reduce_arg_top_k_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  auto root = named<'r'>(op<"ReduceMax|ReduceMin|ArgMax|ArgMin">(x, etc));
  auto pair = keep<'p'>(reduce::top_k_pair_of(root));
  auto top_k = let<'k'>(outputs<2>(TopK(x, fold(int64_tensor({1})), attr<"axis"> = reduce::axis_of(pair),
                                        attr<"largest"> = reduce::largest_of(pair), attr<"sorted"> = 1)));
  // The reduction reads TopK's values, the arg node its indices; the partner's readers the other one.
  return rule("ReduceArgTopK")
      .priority(1)
      .match(root)
      .when(opset_at_least(11) && reduce::has_later_partner(pair))
      .to(choose(reduce::root_is_reduce(pair), top_k, output<1>(top_k)),
          also(found(reduce::partner_of(pair)),
               choose(reduce::root_is_reduce(pair), output<1>(top_k), top_k)));
}

}  // namespace xexp::patterns
