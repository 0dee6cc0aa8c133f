#pragma once
// UnsqueezeEqual: x read by an Unsqueeze and by Equal(x, scalar) whose result is unsqueezed on the same
// axes (a mask built next to the ids it masks) is Equal(Unsqueeze(x), scalar): the Unsqueeze already
// there serves both, one node less. Applied when that Unsqueeze comes first in execution order, where
// the new Equal can read it.
#include <optional>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace reshape {
// The other reader of x (x has two), an Unsqueeze on the same axes as `root`, when it comes before root.
inline ir::ValueId earlier_twin_unsqueeze(const ValueView& root, const ValueView& x) {
  const ir::Graph& g = *root.graph;
  const ir::NodeId root_id = root.value().producer;
  const std::optional<std::vector<int64_t>> axes = ints_attribute_or_input(g, g.node(root_id), "axes", 1);
  if (!axes || x.value().uses.size() != 2 || x.value().is_graph_output()) return ir::kNone;
  for (const ir::Use& u : x.value().uses) {
    const ir::Node& n = g.node(u.node);
    if (n.op_type != Symbol("Unsqueeze") || !n.domain.empty() || u.slot != 0 ||
        ints_attribute_or_input(g, n, "axes", 1) != axes)
      continue;
    return first_in_order(g, root_id, x.id, {u.node}) ? ir::kNone : n.outputs[0];
  }
  return ir::kNone;
}
inline constexpr auto twin_unsqueeze = rewrite::fact<"twin_unsqueeze">(earlier_twin_unsqueeze);
}  // namespace reshape

inline rewrite::RulePtr unsqueeze_equal_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'c'> c;
  auto root = named<'r'>(Unsqueeze(Equal(x, c), etc));
  auto twin = keep<'t'>(reshape::twin_unsqueeze(root, x));
  return rule("UnsqueezeEqual")
      .priority(1)
      .match(root)
      .when(is_constant(c) && is_scalar(c) && rank(x) >= rank(c) && twin != ir::kNone)
      .to(Equal(found(twin), c));
}

}  // namespace xexp::patterns
