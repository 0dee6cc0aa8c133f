#pragma once
// An If whose condition is a constant (an initializer, a Constant node, or a value folding made one)
// always runs the same branch: that branch's nodes move into the graph holding the If, under names free
// there, the branch's outputs become the If's outputs, and what the branch read from the enclosing
// scopes is read directly. The other branch goes, with whatever only it read. Ifs inside the moved
// branch, and Ifs in every subgraph, are treated the same way.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "xexp/eval/fold.hpp"
#include "xexp/ir/cleanup.hpp"
#include "xexp/ir/copy.hpp"
#include "xexp/ir/graph.hpp"

namespace xexp::eval {

namespace detail {

// The branch If node `n` always runs: nullopt unless its condition is a constant boolean of one element.
inline std::optional<bool> constant_condition(const ir::Graph& g, const ir::Node& n, int64_t opset) {
  if (n.inputs.size() != 1 || n.inputs[0] == ir::kNone) return std::nullopt;
  const std::optional<Tensor> condition = constant_value(g, n.inputs[0], opset);
  if (!condition || condition->type() != ElemType::Bool || condition->size() != 1) return std::nullopt;
  return condition->data<bool>()[0];
}

// Replaces If node `id` of `g` by its `taken` branch (see the top of this file). False, with nothing
// changed, for a branch reading a value `g` cannot name or holding a sparse initializer.
inline bool inline_branch(ir::Graph& g, ir::NodeId id, bool taken) {
  static const Symbol then_branch("then_branch"), else_branch("else_branch"), identity("Identity");
  const ir::Attribute* attribute = g.node(id).attribute(taken ? then_branch : else_branch);
  if (!attribute || attribute->graphs.size() != 1) return false;
  const std::shared_ptr<ir::Graph> owner = attribute->graphs[0];  // the If goes before its branch is copied
  const ir::Graph& branch = *owner;
  const std::vector<ir::ValueId> outputs = g.node(id).outputs;
  if (branch.outputs().size() != outputs.size()) return false;
  ir::ValueMap map(branch.value_capacity());
  for (ir::ValueId c : branch.captured()) {
    const std::optional<ir::ValueId> outer = g.find(branch.value(c).name);
    if (!outer) return false;
    map[c] = *outer;
  }
  for (ir::ValueId init : branch.initializers())
    if (!branch.value(init).initializer) return false;

  std::vector<ir::ValueId> released = g.node(id).captured;  // what only the If read may go with it
  released.push_back(g.node(id).inputs[0]);
  const ir::NodeId before = g.node(id).next;
  g.remove_node(id);
  for (ir::ValueId init : branch.initializers())
    map[init] =
        g.add_initializer(g.unique_value_name(branch.value(init).name), *branch.value(init).initializer);
  // A branch output a node of the branch computes is computed into the If's output directly; the
  // others (an enclosing value, a constant, a value listed twice) go through an Identity.
  std::vector<std::pair<ir::ValueId, ir::ValueId>> identities;
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    const ir::ValueId from = branch.outputs()[k], to = outputs[k];
    if (to == ir::kNone || !g.value(to).alive) continue;
    if (branch.value(from).producer != ir::kNone && !map[from])
      map[from] = to;
    else
      identities.emplace_back(from, to);
  }
  ir::CopyPolicy policy;
  policy.value_name = [](ir::Graph& dst, const std::string& name) { return dst.unique_value_name(name); };
  policy.node_name = [](ir::Graph& dst, const std::string& name) {
    return name.empty() ? name : dst.unique_node_name(name);
  };
  ir::copy_nodes(branch, g, map, before, policy);
  for (const auto& [from, to] : identities)
    g.add_node(identity, {*map[from]}, {to}, {}, g.unique_node_name(g.value(to).name + "_taken"), {}, before);
  std::vector<ir::ValueId> touched;
  ir::remove_unused(g, released, touched);
  return true;
}

// The Ifs of `g` itself (not of its subgraphs) with a constant condition; returns how many went. A
// moved branch may hold Ifs of its own, now in `g`: it looks again until none is left.
inline std::size_t inline_constant_ifs_here(ir::Graph& g, int64_t opset) {
  static const Symbol if_op("If");
  std::size_t inlined = 0;
  for (bool changed = true; changed;) {
    changed = false;
    for (ir::NodeId id : g.nodes()) {
      const ir::Node& n = g.node(id);
      if (n.op_type != if_op || !n.domain.empty()) continue;
      const std::optional<bool> taken = constant_condition(g, n, opset);
      if (taken && inline_branch(g, id, *taken)) {
        ++inlined;
        changed = true;
      }
    }
  }
  return inlined;
}

}  // namespace detail

// Replaces every If of `g` and of its subgraphs whose condition is a constant by its taken branch;
// returns how many went. The values enclosing graphs no longer need are left to
// ir::release_unread_captured, the initializers to ir::remove_unused_initializers.
inline std::size_t inline_constant_ifs(ir::Graph& g, int64_t opset) {
  std::size_t inlined = detail::inline_constant_ifs_here(g, opset);
  ir::for_each_subgraph(g, [&](ir::Graph& body) { inlined += detail::inline_constant_ifs_here(body, opset); });
  return inlined;
}

}  // namespace xexp::eval
