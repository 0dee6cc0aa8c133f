#pragma once
// ShapeBasedSameShapeValue: a shape computation that gives back what one of the values it reads (or
// they read) already holds, element for element, is that value: Unsqueeze(Squeeze(Shape(X)[1:2])),
// torch's Where(Equal(shape, -1), ones, shape) on a shape that holds no -1, shape * 1. So is one that
// computes what an earlier node of the same op computes (exporters repeat Unsqueeze(Gather(Shape(X), 1))
// for every Reshape, Slice and Expand, on X or on any other value of the same sequence length): the
// later one goes. Earlier means among the kTwinSearch nodes before it, a bound that keeps the search
// linear in the graph.
// Same type and shape required; every element known (symbols compare by name).
#include <optional>
#include <vector>

#include "xexp/patterns/shape_values.hpp"

namespace xexp::patterns {

namespace shape {
inline constexpr std::size_t kTwinSearch = 256;
// An input of the node producing `v`, an input of such an input's producer, or the output of an earlier
// twin, holding the same elements as `v`; kNone when there is none.
inline constexpr auto same_shape_value_input =
    rewrite::fact<"same_shape_value_input">([](const ValueView& v) -> ir::ValueId {
      const ir::Graph& g = *v.graph;
      if (v.value().is_graph_output()) return ir::kNone;  // its name is the graph's interface
      std::optional<Shape> content = shape_value(v);
      if (!content ||
          std::any_of(content->begin(), content->end(), [](const Dim& d) { return d.is_unknown(); }))
        return ir::kNone;
      auto holds_the_same = [&](ir::ValueId in) {
        if (in == ir::kNone || in == v.id || g.value(in).elem != v.elem() || g.value(in).shape != v.shape())
          return false;
        std::optional<Shape> other = shape_value(g, in);
        return other && *other == *content;
      };
      const ir::Node& node = rewrite::node_of(v);
      for (ir::ValueId in : node.inputs) {
        if (holds_the_same(in)) return in;
        if (in == ir::kNone || g.value(in).producer == ir::kNone) continue;
        for (ir::ValueId deeper : g.node(g.value(in).producer).inputs)
          if (holds_the_same(deeper)) return deeper;
      }
      std::size_t steps = 0;
      for (ir::NodeId k = node.prev; k != ir::kNone && steps < kTwinSearch; k = g.node(k).prev, ++steps) {
        const ir::Node& twin = g.node(k);
        if (twin.op_type == node.op_type && twin.domain == node.domain && twin.outputs.size() == 1 &&
            holds_the_same(twin.outputs[0]))
          return twin.outputs[0];
      }
      return ir::kNone;
    });
}  // namespace shape

inline rewrite::RulePtr shape_based_same_shape_value_rule() {
  using namespace rewrite::dsl;
  auto computed = named<'o'>(op<detail::kShapeValueOps>(etc));
  auto same = keep<'s'>(shape::same_shape_value_input(computed));
  return rule("ShapeBasedSameShapeValue").match(computed).when(same != ir::kNone).to(found(same));
}

}  // namespace xexp::patterns
