#pragma once
// What optimize_model did: node counts before and after, folded and merged nodes, each rule's statistics,
// what a newer opset or another set would fuse; format_report prints it as `xexp optimize` does.
#include <cstddef>
#include <iomanip>
#include <sstream>
#include <string>
#include <vector>

#include "xexp/ir/model.hpp"
#include "xexp/optimizer/rules_waiting.hpp"
#include "xexp/rewrite/driver.hpp"

namespace xexp::optimizer {

struct OptimizeModelReport {
  std::size_t nodes_before = 0, nodes_after = 0;  // main graph, its subgraphs and local functions
  std::size_t folded = 0;                         // nodes replaced by initializers, all steps together
  std::size_t merged = 0;                         // duplicated nodes and initializers merged
  std::size_t inlined = 0;                        // local functions inlined (InlineFunctions)
  std::size_t outlined = 0;                       // fusions kept as intermediate function calls
  double seconds = 0;
  rewrite::OptimizeStats rules;                 // what the rules did
  std::vector<RuleWaitingForOpset> waiting;     // what a newer opset would let the rules do
  std::vector<RuleWaitingForSet> waiting_sets;  // what the sets the spec leaves out would fuse
};

// Nodes of the main graph with its subgraphs, and of the local functions: what the report counts.
inline std::size_t count_nodes(const ir::Model& model) {
  std::size_t n = model.graph->node_count();
  ir::for_each_subgraph(*model.graph, [&](const ir::Graph& body) { n += body.node_count(); });
  for (const ir::Function& f : model.functions) n += f.body->node_count();
  return n;
}

// A table of what happened: the totals, then one row per rule and clean-up step that did something
// (all of them when `all_rules`).
inline std::string format_report(const OptimizeModelReport& report, bool all_rules = false) {
  std::ostringstream out;
  out << "optimized: " << report.nodes_before << " -> " << report.nodes_after << " nodes, " << report.folded
      << " folded, " << report.merged << " merged, ";
  if (report.inlined) out << report.inlined << " functions inlined, ";
  if (report.outlined) out << report.outlined << " fusions kept as intermediate functions, ";
  out << report.rules.iterations << " iterations, " << std::fixed << std::setprecision(3)
      << report.seconds * 1e3 << " ms\n";
  out << "  " << std::left << std::setw(36) << "rule" << std::right << std::setw(3) << "P" << std::setw(9)
      << "tried" << std::setw(9) << "matched" << std::setw(9) << "applied" << std::setw(8) << "+nodes"
      << std::setw(8) << "-nodes" << std::setw(11) << "time(ms)"
      << "\n";
  auto row = [&](const rewrite::RuleStats& s, const std::string& priority) {
    if (!all_rules && s.applied == 0 && s.matched == 0) return;
    out << "  " << std::left << std::setw(36) << s.name << std::right << std::setw(3) << priority
        << std::setw(9) << s.tried << std::setw(9) << s.matched << std::setw(9) << s.applied << std::setw(8)
        << s.added << std::setw(8) << s.removed << std::setw(11) << std::setprecision(3)
        << (s.match_seconds + s.apply_seconds) * 1e3 << "\n";
  };
  for (const rewrite::RuleStats& s : report.rules.rules) row(s, std::to_string(s.priority));
  for (const rewrite::RuleStats& s : report.rules.cleanups) row(s, "-");
  return out.str();
}

}  // namespace xexp::optimizer
