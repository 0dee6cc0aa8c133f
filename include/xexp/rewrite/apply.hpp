#pragma once
// Applying one match: build the replacement before the root, send the root's consumers to it, give it
// the root's output name, then remove the matched nodes nobody reads any more (a `shared` node that
// still has consumers stays).
#include <algorithm>
#include <optional>
#include <vector>

#include "xexp/rewrite/rule.hpp"

namespace xexp::rewrite {

struct Applied {
  bool done = false;                   // false: the replacement declined, the graph is unchanged
  std::vector<ir::NodeId> added;       // new nodes
  std::vector<ir::NodeId> removed;     // matched nodes removed
  std::vector<ir::ValueId> touched;    // values whose producer or consumers changed
};

inline bool is_dead(const ir::Graph& g, ir::NodeId id) { return !g.any_output_read(id); }

// The replacement computes what the root did: where inference, node by node, could not tell a
// dimension of the new value (a symbolic one it knew from the whole computation on load), the root's
// dimension holds.
inline void keep_known_dims(const ir::Value& root, ir::Value& fresh) {
  if (!root.shape || fresh.elem != root.elem) return;
  if (!fresh.shape) {
    fresh.shape = root.shape;
    return;
  }
  if (fresh.shape->size() != root.shape->size()) return;
  for (std::size_t k = 0; k < root.shape->size(); ++k)
    if ((*fresh.shape)[k].is_unknown()) (*fresh.shape)[k] = (*root.shape)[k];
}

inline Applied apply_match(ir::Graph& g, const Rule& rule, const Match& m) {
  Applied result;
  Rewriter r(g, m, rule.pattern_name());
  std::optional<ir::ValueId> replacement = rule.build(r);
  if (!replacement) {
    r.rollback();
    return result;
  }
  result.done = true;
  result.added = r.added();
  const ir::ValueId old = g.node(m.root()).outputs[0];
  const ir::ValueId fresh = *replacement;
  ir::Value& nv = g.value(fresh);
  const bool built_here =
      nv.producer != ir::kNone && std::find(result.added.begin(), result.added.end(), nv.producer) != result.added.end();
  if (built_here && !nv.has_type()) {  // an op inference has no rule for: it computes what the root did
    nv.elem = g.value(old).elem;
    nv.shape = g.value(old).shape;
  } else if (built_here) {
    keep_known_dims(g.value(old), nv);
  }
  const bool was_output = g.value(old).is_graph_output();
  g.replace_all_uses(old, fresh);
  if (built_here && !was_output) {  // the root's output name survives
    std::string kept = g.value(old).name;
    g.rename_value(old, g.unique_value_name(kept + "_replaced"));
    g.rename_value(fresh, std::move(kept));
  }
  result.touched.push_back(old);
  result.touched.push_back(fresh);
  for (const auto& [from, to] : r.later_replacements()) {  // also(...), a rebuilt node's other outputs
    g.value(to).elem = g.value(from).elem;
    g.value(to).shape = g.value(from).shape;
    g.replace_all_uses(from, to);
    result.touched.push_back(from);
    result.touched.push_back(to);
  }
  for (ir::NodeId id : result.added)
    for (ir::ValueId in : g.node(id).inputs)
      if (in != ir::kNone) result.touched.push_back(in);
  // Interior nodes die once their consumers are gone; repeat because DAG patterns list a shared node
  // after only one of its consumers.
  for (bool changed = true; changed;) {
    changed = false;
    for (ir::NodeId id : m) {
      if (!g.node(id).alive || !is_dead(g, id)) continue;
      for (ir::ValueId in : g.node(id).inputs)
        if (in != ir::kNone) result.touched.push_back(in);
      g.remove_node(id);
      result.removed.push_back(id);
      changed = true;
    }
  }
  return result;
}

}  // namespace xexp::rewrite
