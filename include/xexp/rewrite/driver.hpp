#pragma once
// The optimizer driver, with the semantics of experimental-experiment's pattern optimizer (the Python
// project xexp ports; docs/patterns.md lists the rules):
// - priority levels are the sorted distinct priorities of the rules; rules above the current level do
//   not run; the level rises only when an iteration matched nothing, and never falls;
// - an iteration first collects matches in (rule order, node order), first come first served: a match
//   touching a node already taken is dropped (and retried next iteration); then applies them all;
// - clean-ups between iterations: Identity removal, unused nodes, duplicated Shape nodes;
// - iterations are capped (default max(#nodes, 10) x #levels).
// Unlike the Python optimizer, only the first iteration (and the first at a new level, for the rules it
// adds) scans the whole graph: afterwards a worklist holds the nodes near what changed (new nodes,
// producers and consumers of replaced values, and their consumers up to the deepest pattern's depth).
#include <algorithm>
#include <chrono>
#include <functional>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "xexp/ir/constant_node.hpp"
#include "xexp/ir/model.hpp"
#include "xexp/rewrite/apply.hpp"
#include "xexp/ir/cleanup.hpp"
#include "xexp/ir/duplicates.hpp"
#include "xexp/rewrite/rule_set.hpp"

namespace xexp::rewrite {

// Folds one node whose inputs are all constant into an initializer; returns whether it did.
using FoldHook = std::function<bool(ir::Graph&, ir::NodeId, int64_t opset)>;

// Where a run stands after one iteration, for a caller that shows progress on a long run (the driver
// itself writes nothing but its verbose log).
struct OptimizeProgress {
  std::size_t iteration = 0;      // in the graph being optimized (the main graph, then each function body)
  int priority = 0;               // the level the iteration ran at
  std::size_t applied = 0;        // rewrites this iteration
  std::size_t applied_total = 0;  // rewrites since the run began, every graph
  std::size_t nodes = 0;          // nodes left in the graph being optimized
};
using ProgressHook = std::function<void(const OptimizeProgress&)>;

struct OptimizeOptions {
  int verbose = 0;                 // 1: iterations; 2: patterns and STAT lines; 9: overlaps; 10: every match;
                                   // 11: why each rule did not match (as `explain` does for every rule)
  std::ostream* log = nullptr;     // std::cerr when null
  int64_t max_iterations = -1;     // -1: max(#nodes, 10) x #levels
  FoldHook fold_constants = {};    // called on new nodes whose inputs are all constant
  // A rule name ("LayerNormalization"): for each node where its root op type matched but the rule did
  // not, the log gets the first condition or sub-pattern that failed (Rule::explain).
  std::string explain = {};
  ProgressHook on_iteration = {};  // called after every iteration
};

struct RuleStats {
  std::string name;  // "CastPattern", or a clean-up step ("remove_identity_nodes")
  int priority = 0;
  std::size_t tried = 0;       // match attempts
  std::size_t matched = 0;     // matches kept after overlap resolution
  std::size_t applied = 0;     // replacements done
  std::size_t added = 0, removed = 0;
  std::size_t iterations = 0;  // iterations in which the rule was active
  std::size_t max_match = 0;   // most matches in one iteration
  double match_seconds = 0, apply_seconds = 0;
};

struct OptimizeStats {
  std::size_t iterations = 0;
  std::size_t nodes_before = 0, nodes_after = 0;
  double seconds = 0;
  std::vector<RuleStats> rules;     // one per rule of the set, in set order (summed over graphs)
  std::vector<RuleStats> cleanups;  // remove_identity_nodes, remove_unused, remove_duplicated_nodes
  const RuleStats* find(std::string_view short_or_pattern_name) const {
    for (const RuleStats& r : rules)
      if (r.name == short_or_pattern_name || r.name == std::string(short_or_pattern_name) + "Pattern") return &r;
    for (const RuleStats& r : cleanups)
      if (r.name == short_or_pattern_name) return &r;
    return nullptr;
  }
};

namespace detail {

using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

class GraphOptimizer {
 public:
  GraphOptimizer(ir::Graph& g, std::vector<ir::OpsetImport>& opsets, const RuleSet& rules,
                 const OptimizeOptions& options, OptimizeStats& stats)
      : g_(g), opsets_(opsets), rules_(rules), options_(options), stats_(stats),
        log_(options.log ? *options.log : std::cerr),
        opset_(find_opset(opsets, "").value_or(kDefaultOpset)) {
    for (std::size_t k = 0; k < rules_.size(); ++k) {
      for (const OpKey& key : rules_[k]->roots()) by_root_[op_key(key.domain, key.op_type)].push_back(k);
      max_depth_ = std::max(max_depth_, rules_[k]->depth());
      if (std::find(levels_.begin(), levels_.end(), rules_[k]->priority()) == levels_.end())
        levels_.push_back(rules_[k]->priority());
    }
    std::sort(levels_.begin(), levels_.end());
    if (stats_.rules.empty())
      for (const RulePtr& r : rules_) stats_.rules.push_back({.name = r->pattern_name(), .priority = r->priority()});
    const std::string& explain = options_.explain;
    explained_.resize(rules_.size(), 0);
    for (std::size_t k = 0; k < rules_.size(); ++k)
      explained_[k] = options_.verbose >= 11 ||
                      (!explain.empty() && (rules_[k]->name() == explain || rules_[k]->pattern_name() == explain));
    if (stats_.cleanups.empty())
      for (const char* name : {"remove_identity_nodes", "remove_unused", "remove_duplicated_nodes"})
        stats_.cleanups.push_back({.name = name});
  }

  void run() {
    const auto start = Clock::now();
    stats_.nodes_before += g_.node_count();
    initial_cleanup();
    const std::size_t n_levels = std::max<std::size_t>(levels_.size(), 1);
    const int64_t cap = options_.max_iterations >= 0
                            ? options_.max_iterations
                            : static_cast<int64_t>(std::max<std::size_t>(g_.node_count(), 10) * n_levels);
    say(1) << "start with " << g_.node_count() << " nodes, " << g_.initializers().size() << " initializers, "
           << rules_.size() << " patterns, priorities=" << levels_str() << ", max_iter=" << cap << "\n";
    if (options_.verbose > 1)
      for (std::size_t k = 0; k < rules_.size(); ++k)
        say(2) << "use pattern " << std::setw(3) << k + 1 << "/" << rules_.size() << " - P"
               << rules_[k]->priority() << " - " << rules_[k]->pattern_name() << "()\n";
    std::size_t level = 0;
    int scan_above = std::numeric_limits<int>::min();  // non-dirty nodes try rules above this priority
    int64_t it = 0;
    for (; it < cap && !levels_.empty(); ++it) {
      say(1) << "iteration " << it << ": " << g_.node_count() << " nodes, priority=" << levels_[level] << "\n";
      std::vector<Found> found = collect(levels_[level], scan_above);
      scan_above = levels_[level];
      if (found.empty()) {
        report_progress(it, levels_[level], 0);
        if (level + 1 == levels_.size()) {
          ++it;
          break;
        }
        ++level;
        say(1) << "increase priority to " << levels_[level] << "\n";
        continue;
      }
      report_progress(it, levels_[level], apply_all(found));
    }
    ir::remove_unused_initializers(g_);
    stats_.iterations += static_cast<std::size_t>(it);
    stats_.nodes_after += g_.node_count();
    stats_.seconds += seconds_since(start);
    say(1) << "done after " << it << " iterations with " << g_.node_count() << " nodes in "
           << seconds_since(start) << "\n";
  }

 private:
  static constexpr int64_t kDefaultOpset = 18;  // a graph without a default-domain import
  struct Found {
    std::size_t rule;
    Match match;
  };

  std::ostream& say(int level) {
    if (options_.verbose < level) return null_;
    return log_ << "[GraphBuilderPatternOptimization.optimize] ";
  }
  std::string levels_str() const {
    std::string out = "[";
    for (std::size_t k = 0; k < levels_.size(); ++k) out += (k ? ", " : "") + std::to_string(levels_[k]);
    return out + "]";
  }
  bool is_dirty(ir::NodeId id) const { return id < dirty_.size() && dirty_[id]; }

  // Matching step: nothing changes, matches are only collected, then sorted by rule (stable: node order).
  std::vector<Found> collect(int max_priority, int scan_above) {
    std::vector<Found> found;
    std::vector<std::size_t> per_rule(rules_.size(), 0);
    std::vector<double> times(rules_.size(), 0);
    Match m;
    for (ir::NodeId id : g_.nodes()) {
      const bool dirty = is_dirty(id);
      if (dirty) dirty_[id] = 0;
      auto it = by_root_.find(op_key(g_.node(id).domain, g_.node(id).op_type));
      if (it == by_root_.end()) continue;
      for (std::size_t k : it->second) {
        const int p = rules_[k]->priority();
        if (p > max_priority || (!dirty && p <= scan_above)) continue;
        const auto t0 = Clock::now();
        ++stats_.rules[k].tried;
        const bool ok = rules_[k]->match(g_, id, opset_, m);
        times[k] += seconds_since(t0);
        if (ok) found.push_back({k, m});
        else if (explained_[k]) [[unlikely]] explain_failure(k, id);
      }
    }
    for (std::size_t k = 0; k < rules_.size(); ++k) {
      stats_.rules[k].match_seconds += times[k];
      if (rules_[k]->priority() <= max_priority) ++stats_.rules[k].iterations;
    }
    std::stable_sort(found.begin(), found.end(), [](const Found& a, const Found& b) { return a.rule < b.rule; });
    // First come, first served.
    marked_.assign(g_.node_capacity(), 0);
    std::vector<Found> kept;
    for (Found& f : found) {
      const bool overlaps = std::any_of(f.match.begin(), f.match.end(), [&](ir::NodeId n) { return marked_[n]; });
      if (overlaps) {
        say(9) << "OVERLAP " << rules_[f.rule]->pattern_name() << " at " << node_label(f.match.root()) << "\n";
        mark(f.match.root());  // may match once the other rewrite is done
        continue;
      }
      for (ir::NodeId n : f.match) marked_[n] = 1;
      say(10) << "match " << rules_[f.rule]->pattern_name() << " at " << node_label(f.match.root()) << "\n";
      ++per_rule[f.rule];
      kept.push_back(std::move(f));
    }
    for (std::size_t k = 0; k < rules_.size(); ++k) {
      stats_.rules[k].matched += per_rule[k];
      stats_.rules[k].max_match = std::max(stats_.rules[k].max_match, per_rule[k]);
    }
    if (!kept.empty() && options_.verbose >= 1) {
      last_max_time_ = {};
      for (std::size_t k = 0; k < rules_.size(); ++k)
        if (times[k] >= last_max_time_.second) last_max_time_ = {rules_[k]->pattern_name(), times[k]};
    }
    return kept;
  }

  // "LayerNormalization @ /h.0/ln_1/Div: is_last_axis(axis, x) failed", once per rule and node.
  void explain_failure(std::size_t k, ir::NodeId id) {
    const std::string& name = g_.node(id).name;
    if (!explained_at_.insert({k, name}).second) return;
    log_ << rules_[k]->name() << " @ " << (name.empty() ? node_label(id) : name) << ": "
         << rules_[k]->explain(g_, id, opset_) << "\n";
  }

  std::string node_label(ir::NodeId id) const {
    const ir::Node& n = g_.node(id);
    return n.op_type.str() + "(" + (n.name.empty() ? std::to_string(id) : n.name) + ")";
  }

  void report_progress(int64_t it, int priority, std::size_t applied) {
    if (!options_.on_iteration) return;
    std::size_t total = 0;
    for (const RuleStats& s : stats_.rules) total += s.applied;
    options_.on_iteration({.iteration = static_cast<std::size_t>(it), .priority = priority, .applied = applied,
                           .applied_total = total, .nodes = g_.node_count()});
  }

  // Returns the number of rewrites done.
  std::size_t apply_all(const std::vector<Found>& found) {
    const auto start = Clock::now();
    std::vector<ir::ValueId> touched;
    std::map<std::string, std::size_t> counts;
    Match fresh;
    for (std::size_t k = 0; k < found.size(); ++k) {
      const Found& f = found[k];
      const auto t0 = Clock::now();
      const Rule& rule = *rules_[f.rule];
      // An earlier rewrite of this iteration may have replaced a value this match captured (say, the
      // output of a Cast it removed): its captures are stale. Match again; apply only when the same
      // nodes still match, else retry next iteration.
      if (k > 0 && !matches_again(f, fresh)) {
        say(10) << "STALE " << rule.pattern_name() << " at " << node_label(f.match.root()) << "\n";
        mark(f.match.root());
        continue;
      }
      say(10) << "apply " << rule.pattern_name() << " at " << node_label(f.match.root()) << "\n";
      Applied a = apply_match(g_, rule, k > 0 ? fresh : f.match);
      RuleStats& s = stats_.rules[f.rule];
      s.apply_seconds += seconds_since(t0);
      if (!a.done) {
        say(10) << "NONE " << rule.pattern_name() << " declined\n";
        continue;
      }
      ++s.applied;
      ++counts[rule.pattern_name()];
      s.added += a.added.size();
      s.removed += a.removed.size();
      touched.insert(touched.end(), a.touched.begin(), a.touched.end());
      for (ir::NodeId id : a.added) {
        require_domain(g_.node(id).domain);
        for (ir::ValueId out : g_.node(id).outputs)
          if (out != ir::kNone) touched.push_back(out);
        fold_if_constant(id, touched);
      }
    }
    fold_constant_readers(touched);
    cleanup(touched);
    mark_dirty(touched);
    std::size_t total = 0;
    for (const auto& [name, n] : counts) total += n;
    if (options_.verbose >= 1) {
      std::ostream& out = say(1);
      out << "applies " << total << " matches";
      for (const auto& [name, n] : counts) out << ", " << n << "*" << name;
      out << " - time=" << std::fixed << std::setprecision(3) << seconds_since(start) << " | max_time="
          << last_max_time_.first << ":" << last_max_time_.second << std::defaultfloat << "\n";
    }
    return total;
  }

  bool matches_again(const Found& f, Match& fresh) const {
    if (!rules_[f.rule]->match(g_, f.match.root(), opset_, fresh) || fresh.node_count() != f.match.node_count())
      return false;
    std::vector<ir::NodeId> before(f.match.begin(), f.match.end()), now(fresh.begin(), fresh.end());
    std::sort(before.begin(), before.end());
    std::sort(now.begin(), now.end());
    return before == now;
  }

  void require_domain(Symbol domain) {
    if (domain.empty() || find_opset(opsets_, domain.view())) return;
    opsets_.push_back({domain.str(), 1, {}});
  }

  void fold_if_constant(ir::NodeId id, std::vector<ir::ValueId>& touched) {
    if (!options_.fold_constants) return;
    const ir::Node& n = g_.node(id);
    for (ir::ValueId in : n.inputs)
      if (in != ir::kNone && !constant_tensor(g_, in)) return;
    std::vector<ir::ValueId> outputs = n.outputs;
    if (options_.fold_constants(g_, id, opset_)) touched.insert(touched.end(), outputs.begin(), outputs.end());
  }

  // A rewrite that made a value constant (a shape value become an initializer) makes constant the nodes
  // that read only constants after it: they fold now, so that the rules of this run read their values
  // (a scale 1 / sqrt(head_size) computed from a Shape) and not only the folding after the run.
  void fold_constant_readers(std::vector<ir::ValueId>& touched) {
    if (!options_.fold_constants) return;
    for (std::size_t k = 0; k < touched.size(); ++k) {  // grows with what folds
      const ir::ValueId v = touched[k];
      if (v == ir::kNone || !g_.value(v).alive || !constant_tensor(g_, v)) continue;
      for (const ir::Use& u : std::vector<ir::Use>(g_.value(v).uses))
        if (u.slot != ir::kCapturedSlot && g_.node(u.node).alive) fold_if_constant(u.node, touched);
    }
  }

  // Runs a clean-up step returning how many nodes it removed, into its statistics.
  template <class Step>
  void timed(RuleStats& s, Step&& step) {
    const auto t0 = Clock::now();
    const std::size_t removed = step();
    s.removed += removed;
    s.applied += removed;
    ++s.iterations;
    s.apply_seconds += seconds_since(t0);
  }

  void initial_cleanup() {
    // Duplicates first, in one pass in execution order: around every value, remove_duplicated_nodes
    // would walk the graph from each value's producer.
    timed(stats_.cleanups[2], [&] { return ir::remove_duplicated_nodes(g_); });
    std::vector<ir::ValueId> touched;
    for (ir::NodeId id : g_.nodes())
      for (ir::ValueId out : g_.node(id).outputs)
        if (out != ir::kNone) touched.push_back(out);
    for (ir::ValueId id : g_.inputs()) touched.push_back(id);
    for (ir::ValueId id : g_.initializers()) touched.push_back(id);
    cleanup(touched);
    dirty_.clear();  // the first iteration scans everything anyway
  }

  void cleanup(std::vector<ir::ValueId>& touched) {
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    // A merge appends the kept outputs to `touched`: their consumers are checked in turn, so that a
    // duplicated chain merges whole.
    timed(stats_.cleanups[2], [&] {
      std::size_t removed = 0;
      for (std::size_t k = 0; k < touched.size(); ++k)
        if (g_.value(touched[k]).alive) removed += ir::remove_duplicated_nodes(g_, touched[k], touched);
      return removed;
    });
    timed(stats_.cleanups[0], [&] {
      std::vector<ir::NodeId> identities;
      for (std::size_t k = 0; k < touched.size(); ++k) {
        const ir::Value& v = g_.value(touched[k]);
        if (v.producer != ir::kNone) identities.push_back(v.producer);
        for (const ir::Use& u : v.uses) identities.push_back(u.node);
      }
      std::size_t removed = 0;
      for (ir::NodeId id : identities) removed += ir::remove_identity(g_, id, touched);
      return removed;
    });
    timed(stats_.cleanups[1], [&] {
      std::vector<ir::ValueId> from = touched;
      return ir::remove_unused(g_, from, touched);
    });
  }

  // Marks the nodes around `touched` for matching, then their consumers up to the deepest pattern.
  void mark_dirty(const std::vector<ir::ValueId>& touched) {
    dirty_.resize(g_.node_capacity(), 0);
    std::vector<ir::NodeId> frontier, next;
    for (ir::ValueId v : touched) {
      const ir::Value& value = g_.value(v);
      if (value.producer != ir::kNone) frontier.push_back(value.producer);
      for (const ir::Use& u : value.uses) frontier.push_back(u.node);
    }
    for (int hop = 0; hop <= max_depth_ && !frontier.empty(); ++hop) {
      next.clear();
      for (ir::NodeId id : frontier) {
        if (!g_.node(id).alive || dirty_[id]) continue;
        dirty_[id] = 1;
        for (ir::ValueId out : g_.node(id).outputs)
          if (out != ir::kNone)
            for (const ir::Use& u : g_.value(out).uses) next.push_back(u.node);
      }
      std::swap(frontier, next);
    }
  }
  void mark(ir::NodeId id) {
    dirty_.resize(g_.node_capacity(), 0);
    dirty_[id] = 1;
  }

  ir::Graph& g_;
  std::vector<ir::OpsetImport>& opsets_;
  const RuleSet& rules_;
  const OptimizeOptions& options_;
  OptimizeStats& stats_;
  std::ostream& log_;
  int64_t opset_;
  std::unordered_map<uint64_t, std::vector<std::size_t>> by_root_;
  std::vector<int> levels_;
  int max_depth_ = 0;
  std::vector<uint8_t> dirty_, marked_;
  std::vector<uint8_t> explained_;                           // per rule: explain its failures
  std::set<std::pair<std::size_t, std::string>> explained_at_;  // (rule, node name) already explained
  std::pair<std::string, double> last_max_time_;
  std::ostream null_{nullptr};  // discards what the verbose level does not show
};

inline void print_statistics(std::ostream& out, const OptimizeStats& stats) {
  auto line = [&](const std::string& key, const RuleStats& s, std::size_t added, std::size_t removed,
                  std::size_t instances, double time) {
    out << "    STAT " << key << " +" << added << " -" << removed << " #it=" << s.iterations
        << " maxmatch=" << s.max_match << " i=" << instances << " - time=" << time << "\n";
  };
  std::map<std::string, std::function<void()>> rows;  // sorted by key, as experimental-experiment prints them
  for (const RuleStats& s : stats.rules) {
    rows["match_" + s.name] = [&, s] { line("match_" + s.name, s, 0, 0, s.matched, s.match_seconds); };
    if (s.applied)
      rows["apply_" + s.name] = [&, s] { line("apply_" + s.name, s, s.added, s.removed, s.applied, s.apply_seconds); };
  }
  for (const RuleStats& s : stats.cleanups)
    rows[s.name] = [&, s] { line(s.name, s, s.added, s.removed, s.applied, s.apply_seconds); };
  for (const auto& [key, print] : rows) print();
}

}  // namespace detail

// Optimizes one graph; `opsets` gains the domains new nodes need.
inline OptimizeStats optimize_graph(ir::Graph& g, std::vector<ir::OpsetImport>& opsets, const RuleSet& rules,
                                    const OptimizeOptions& options = {}, OptimizeStats stats = {}) {
  ir::constant_shorthands_to_value(g);  // so that rules read every Constant node's tensor
  detail::GraphOptimizer(g, opsets, rules, options, stats).run();
  return stats;
}

// Optimizes `g`, then its If, Loop and Scan bodies (each reading the enclosing values by name, nested
// bodies after the body holding them), then releases what the bodies no longer read.
inline OptimizeStats optimize_with_subgraphs(ir::Graph& g, std::vector<ir::OpsetImport>& opsets,
                                             const RuleSet& rules, const OptimizeOptions& options,
                                             OptimizeStats stats) {
  stats = optimize_graph(g, opsets, rules, options, std::move(stats));
  ir::for_each_subgraph(g, [&](ir::Graph& body) {
    stats = optimize_graph(body, opsets, rules, options, std::move(stats));
  });
  ir::release_unread_captured(g);
  return stats;
}

// Optimizes the main graph with its subgraphs, then each local function body with its subgraphs on its
// own. Statistics are summed, onto `stats` for a model optimized again.
inline OptimizeStats optimize(ir::Model& model, const RuleSet& rules, const OptimizeOptions& options = {},
                              OptimizeStats stats = {}) {
  stats = optimize_with_subgraphs(*model.graph, model.opsets, rules, options, std::move(stats));
  for (ir::Function& f : model.functions) {
    stats = optimize_with_subgraphs(*f.body, f.opsets, rules, options, std::move(stats));
    ir::initializers_to_constant_nodes(*f.body);
    for (const ir::OpsetImport& o : f.opsets)
      if (!find_opset(model.opsets, o.domain)) model.opsets.push_back(o);
  }
  if (options.verbose > 1) detail::print_statistics(options.log ? *options.log : std::cerr, stats);
  return stats;
}

}  // namespace xexp::rewrite
