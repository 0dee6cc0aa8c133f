#pragma once
// The clean-ups the driver runs between iterations, local to the values an iteration touched: Identity
// removal, removal of nodes nobody reads, and merging of Shape nodes reading the same value. Each
// reports the values it touched so that the driver knows what to match again.
#include <vector>

#include "xexp/ir/cleanup.hpp"
#include "xexp/ir/graph.hpp"

namespace xexp::rewrite {

struct CleanupCounts {
  std::size_t added = 0, removed = 0;
};

// Removes Identity `id` unless its output is a graph output whose name its input cannot take.
inline bool remove_identity(ir::Graph& g, ir::NodeId id, std::vector<ir::ValueId>& touched) {
  const ir::Node& n = g.node(id);
  if (!n.alive || n.op_type != Symbol("Identity") || !n.domain.empty() || n.inputs.size() != 1 ||
      n.outputs.size() != 1 || n.inputs[0] == ir::kNone)
    return false;
  const ir::ValueId in = n.inputs[0], out = n.outputs[0];
  const ir::Value& iv = g.value(in);
  if (g.value(out).is_graph_output() && (iv.producer == ir::kNone || iv.is_graph_output() || iv.is_input ||
                                         iv.is_initializer() || iv.is_captured))
    return false;
  g.replace_all_uses(out, in);
  g.remove_node(id);
  touched.push_back(in);
  return true;
}

// Removes nodes whose outputs are all unused, starting from the producers of `values`, transitively.
inline std::size_t remove_unused(ir::Graph& g, const std::vector<ir::ValueId>& values,
                                 std::vector<ir::ValueId>& touched) {
  std::vector<ir::NodeId> work;
  for (ir::ValueId v : values)
    if (g.value(v).producer != ir::kNone) work.push_back(g.value(v).producer);
  std::size_t removed = 0;
  while (!work.empty()) {
    ir::NodeId id = work.back();
    work.pop_back();
    const ir::Node& n = g.node(id);
    if (!n.alive || n.outputs.empty()) continue;
    bool dead = true;
    for (ir::ValueId out : n.outputs)
      if (out != ir::kNone && (!g.value(out).uses.empty() || g.value(out).is_graph_output())) dead = false;
    if (!dead) continue;
    std::vector<ir::ValueId> inputs = n.inputs;
    g.remove_node(id);
    ++removed;
    for (ir::ValueId in : inputs)
      if (in != ir::kNone) {
        touched.push_back(in);
        if (g.value(in).producer != ir::kNone) work.push_back(g.value(in).producer);
      }
  }
  return removed;
}

// Several Shape nodes with the same input and attributes: the first one serves all consumers.
inline std::size_t remove_duplicated_shapes(ir::Graph& g, ir::ValueId input, std::vector<ir::ValueId>& touched) {
  std::vector<ir::NodeId> shapes;
  for (const ir::Use& u : g.value(input).uses) {
    const ir::Node& n = g.node(u.node);
    if (n.op_type == Symbol("Shape") && n.domain.empty() && n.alive && n.outputs.size() == 1) shapes.push_back(u.node);
  }
  std::size_t removed = 0;
  auto same_attributes = [&](const ir::Node& a, const ir::Node& b) {
    for (Symbol name : {Symbol("start"), Symbol("end")}) {
      const ir::Attribute *x = a.attribute(name), *y = b.attribute(name);
      if ((x == nullptr) != (y == nullptr) || (x && x->i != y->i)) return false;
    }
    return true;
  };
  // Whether `a` runs before `b`; both read `input`, so the walk back from `b` stops at its producer.
  auto precedes = [&](ir::NodeId a, ir::NodeId b) {
    for (ir::NodeId k = g.node(b).prev; k != ir::kNone && k != g.value(input).producer; k = g.node(k).prev)
      if (k == a) return true;
    return false;
  };
  for (std::size_t i = 0; i < shapes.size(); ++i)
    for (std::size_t j = i + 1; j < shapes.size(); ++j) {
      if (!g.node(shapes[i]).alive || !g.node(shapes[j]).alive ||
          !same_attributes(g.node(shapes[i]), g.node(shapes[j])))
        continue;
      ir::NodeId first = shapes[i], second = shapes[j];
      if (!precedes(first, second)) std::swap(first, second);
      if (g.value(g.node(second).outputs[0]).is_graph_output()) continue;
      g.replace_all_uses(g.node(second).outputs[0], g.node(first).outputs[0]);
      touched.push_back(g.node(first).outputs[0]);
      g.remove_node(second);
      shapes[i] = first;
      shapes[j] = second;
      ++removed;
    }
  return removed;
}

// Unused initializers are dropped at the end of an optimization.
using ir::remove_unused_initializers;

}  // namespace xexp::rewrite
