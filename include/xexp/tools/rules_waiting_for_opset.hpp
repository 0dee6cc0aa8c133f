#pragma once
// Rules that a newer opset would let fire: after optimizing, each rule of the set is matched once more
// at every node of the main graph, at the opsets above the model's up to kMaxTargetOpset. A node it
// matches there but not at the model's own opset is a rewrite the opset alone held back (an opset
// condition, such as LayerNormalization's opset >= 17). Only fusions count, matches of several nodes:
// a one-node rewrite (ShapeBasedReshapeIsSqueeze's Reshape to Squeeze at 18) is no reason to upgrade.
// `xexp optimize` turns this into its line
// "9 LayerNormalization matches would fuse with --target-opset 17".
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "xexp/ir/model.hpp"
#include "xexp/onnx/opset_upgrade.hpp"
#include "xexp/rewrite/rule_set.hpp"

namespace xexp::tools {

struct RuleWaitingForOpset {
  std::string rule;     // short name ("LayerNormalization")
  std::size_t matches;  // nodes where it would fire
  int64_t opset;        // the opset all of those matches need
};

inline std::vector<RuleWaitingForOpset> rules_waiting_for_opset(const ir::Model& model, const rewrite::RuleSet& rules) {
  const int64_t opset = model.opset("").value_or(0);
  std::vector<RuleWaitingForOpset> waiting;
  if (opset == 0 || opset >= kMaxTargetOpset) return waiting;
  const ir::Graph& g = *model.graph;
  rewrite::Match m;
  for (const rewrite::RulePtr& rule : rules) {
    const std::vector<rewrite::OpKey> roots = rule->roots();
    RuleWaitingForOpset found{rule->name(), 0, opset};
    for (ir::NodeId id : g.nodes()) {
      const ir::Node& n = g.node(id);
      const bool root = std::any_of(roots.begin(), roots.end(), [&](const rewrite::OpKey& key) {
        return key.op_type == n.op_type && key.domain == n.domain;
      });
      if (!root || rule->match(g, id, opset, m)) continue;
      for (int64_t newer = opset + 1; newer <= kMaxTargetOpset; ++newer)
        if (rule->match(g, id, newer, m) && m.node_count() > 1) {
          ++found.matches;
          found.opset = std::max(found.opset, newer);
          break;
        }
    }
    if (found.matches) waiting.push_back(std::move(found));
  }
  return waiting;
}

// "9 LayerNormalization matches would fuse with --target-opset 17, 2 ConcatTwiceUnary with
// --target-opset 18" (each rule with the opset it needs, lowest first), or "" when none.
inline std::string format_waiting(std::vector<RuleWaitingForOpset> waiting) {
  if (waiting.empty()) return {};
  std::stable_sort(waiting.begin(), waiting.end(),
                   [](const RuleWaitingForOpset& a, const RuleWaitingForOpset& b) { return a.opset < b.opset; });
  std::string line;
  bool first_group = true;
  for (std::size_t k = 0; k < waiting.size(); ++k) {
    line += (k ? ", " : "") + std::to_string(waiting[k].matches) + " " + waiting[k].rule;
    if (k + 1 < waiting.size() && waiting[k + 1].opset == waiting[k].opset) continue;
    line += (first_group ? " matches would fuse" : "") + std::string(" with --target-opset ") +
            std::to_string(waiting[k].opset);
    first_group = false;
  }
  return line + "\n";
}

}  // namespace xexp::tools
