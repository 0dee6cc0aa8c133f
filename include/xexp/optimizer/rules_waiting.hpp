#pragma once
// What the rules would do with a newer opset or another rule set, said after optimizing. Each rule is
// matched once more at every node of the main graph:
// - a rule of the spec at the opsets above the model's, up to kMaxTargetOpset: a node it matches there
//   but not at the model's own opset is a rewrite the opset alone held back (an opset condition, such
//   as LayerNormalization's opset >= 17);
// - a rule of a set the spec takes none of (the opt-in onnxruntime_training), at the model's opset.
// Only fusions count, matches of several nodes: a one-node rewrite (ShapeBasedReshapeIsSqueeze's
// Reshape to Squeeze at 18) is no reason to upgrade. `xexp optimize` turns these into its lines
// "9 LayerNormalization matches would fuse with --target-opset 17" and
// "12 SoftmaxGrad matches would fuse with --patterns default+onnxruntime+onnxruntime_training".
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "xexp/ir/model.hpp"
#include "xexp/onnx/opset_upgrade.hpp"
#include "xexp/rewrite/rule_set.hpp"

namespace xexp::optimizer {

struct RuleWaitingForOpset {
  std::string rule;     // short name ("LayerNormalization")
  std::size_t matches;  // nodes where it would fire
  int64_t opset;        // the opset all of those matches need
};

struct RuleWaitingForSet {
  std::string rule;     // short name ("SoftmaxGrad")
  std::size_t matches;  // nodes where it would fire
  std::string set;      // the catalog set it belongs to ("onnxruntime_training")
};

namespace detail {

// Whether a rule with these roots may start at node `n` (the driver indexes rules by domain and op type).
inline bool is_root_of(const std::vector<rewrite::OpKey>& roots, const ir::Node& n) {
  return std::any_of(roots.begin(), roots.end(), [&](const rewrite::OpKey& key) {
    return key.op_type == n.op_type && key.domain == n.domain;
  });
}

// "9 LayerNormalization, 2 X matches would fuse with A, 1 Y with B": (count rule, what it needs) pairs,
// those needing the same thing next to each other.
inline std::string join_waiting(const std::vector<std::pair<std::string, std::string>>& items) {
  std::string line;
  bool first_group = true;
  for (std::size_t k = 0; k < items.size(); ++k) {
    line += (k ? ", " : "") + items[k].first;
    if (k + 1 < items.size() && items[k + 1].second == items[k].second) continue;
    line += (first_group ? " matches would fuse" : "") + std::string(" with ") + items[k].second;
    first_group = false;
  }
  return line.empty() ? line : line + "\n";
}

}  // namespace detail

// One match a newer opset would let a rule of the spec fire: a fusion (several nodes) the opset holds back.
struct FusionWaitingForOpset {
  std::string rule;               // short name ("LayerNormalization")
  int64_t opset;                  // the lowest opset the rule matches at
  std::vector<ir::NodeId> nodes;  // the matched nodes, the root first
};

inline std::vector<FusionWaitingForOpset> fusions_waiting_for_opset(const ir::Model& model,
                                                                    const rewrite::RuleSet& rules) {
  const int64_t opset = model.opset("").value_or(0);
  std::vector<FusionWaitingForOpset> waiting;
  if (opset == 0 || opset >= kMaxTargetOpset) return waiting;
  const ir::Graph& g = *model.graph;
  rewrite::Match m;
  for (const rewrite::RulePtr& rule : rules) {
    const std::vector<rewrite::OpKey> roots = rule->roots();
    for (ir::NodeId id : g.nodes()) {
      if (!detail::is_root_of(roots, g.node(id)) || rule->match(g, id, opset, m)) continue;
      for (int64_t newer = opset + 1; newer <= kMaxTargetOpset; ++newer)
        if (rule->match(g, id, newer, m) && m.node_count() > 1) {
          waiting.push_back({rule->name(), newer, std::vector<ir::NodeId>(m.begin(), m.end())});
          break;
        }
    }
  }
  return waiting;
}

// The fusions counted by rule, with the opset all of a rule's matches need.
inline std::vector<RuleWaitingForOpset> rules_waiting_for_opset(
    const std::vector<FusionWaitingForOpset>& fusions) {
  std::vector<RuleWaitingForOpset> waiting;
  for (const FusionWaitingForOpset& f : fusions) {  // fusions_waiting_for_opset lists each rule's together
    if (waiting.empty() || waiting.back().rule != f.rule) waiting.push_back({f.rule, 0, f.opset});
    ++waiting.back().matches;
    waiting.back().opset = std::max(waiting.back().opset, f.opset);
  }
  return waiting;
}

// The rules of the sets of `catalog` that `rules` takes nothing from, where they would fuse.
inline std::vector<RuleWaitingForSet> rules_waiting_for_set(
    const ir::Model& model, const rewrite::RuleSet& rules,
    const rewrite::Catalog& catalog = rewrite::Catalog::global()) {
  const int64_t opset = model.opset("").value_or(0);
  std::vector<RuleWaitingForSet> waiting;
  if (opset == 0) return waiting;
  std::set<std::string> taken;
  for (const rewrite::RulePtr& rule : rules) taken.insert(rule->name());
  const ir::Graph& g = *model.graph;
  rewrite::Match m;
  for (const std::string& set : catalog.set_names()) {
    const rewrite::RuleSet members = catalog.resolve(set);
    if (std::any_of(members.begin(), members.end(),
                    [&](const rewrite::RulePtr& r) { return taken.count(r->name()); }))
      continue;
    for (const rewrite::RulePtr& rule : members) {
      const std::vector<rewrite::OpKey> roots = rule->roots();
      RuleWaitingForSet found{rule->name(), 0, set};
      for (ir::NodeId id : g.nodes())
        if (detail::is_root_of(roots, g.node(id)) && rule->match(g, id, opset, m) && m.node_count() > 1)
          ++found.matches;
      if (found.matches) waiting.push_back(std::move(found));
    }
  }
  return waiting;
}

// "9 LayerNormalization matches would fuse with --target-opset 17, 2 ConcatTwiceUnary with
// --target-opset 18" (each rule with the opset it needs, lowest first), or "" when none.
inline std::string format_waiting(std::vector<RuleWaitingForOpset> waiting) {
  std::stable_sort(
      waiting.begin(), waiting.end(),
      [](const RuleWaitingForOpset& a, const RuleWaitingForOpset& b) { return a.opset < b.opset; });
  std::vector<std::pair<std::string, std::string>> items;
  for (const RuleWaitingForOpset& w : waiting)
    items.emplace_back(std::to_string(w.matches) + " " + w.rule, "--target-opset " + std::to_string(w.opset));
  return detail::join_waiting(items);
}

// "12 SoftmaxGrad matches would fuse with --patterns default+onnxruntime+onnxruntime_training" for the
// rules optimized with `spec`, or "" when none.
inline std::string format_waiting(const std::vector<RuleWaitingForSet>& waiting, const std::string& spec) {
  std::vector<std::pair<std::string, std::string>> items;
  for (const RuleWaitingForSet& w : waiting)  // rules_waiting_for_set lists each set's rules together
    items.emplace_back(std::to_string(w.matches) + " " + w.rule, "--patterns " + spec + "+" + w.set);
  return detail::join_waiting(items);
}

}  // namespace xexp::optimizer
