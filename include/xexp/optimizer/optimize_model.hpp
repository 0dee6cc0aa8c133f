#pragma once
// The optimizer as a user runs it (`xexp optimize`), as named steps (steps.hpp): the calls of op-library
// functions are inlined, the opset upgraded when asked for, Constant nodes become initializers,
// duplicates merged, constants folded, every value gets its type and shape, then the rules of a set
// string (rewrite::optimize) run, folding the nodes they create whose inputs are all constant, and
// folding once more for what they left constant. Last, what a newer opset or another set would fuse is
// said, and the LLM blocks an older opset holds back become intermediate functions (stage 1).
#include <chrono>
#include <cstddef>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "xexp/ir/model.hpp"
#include "xexp/onnx/opset_upgrade.hpp"
#include "xexp/optimizer/intermediate_functions.hpp"
#include "xexp/optimizer/options.hpp"
#include "xexp/optimizer/report.hpp"
#include "xexp/optimizer/rules_waiting.hpp"
#include "xexp/optimizer/steps.hpp"
#include "xexp/patterns/registry.hpp"
#include "xexp/rewrite/driver.hpp"
#include "xexp/rewrite/rule_set.hpp"

namespace xexp::optimizer {

// Optimizes `model` in place. Throws xexp::Error for an unknown pattern name or a refused opset upgrade
// (before touching the model).
inline OptimizeModelReport optimize_model(ir::Model& model, const OptimizeModelOptions& options = {}) {
  const rewrite::RuleSet rules = rewrite::rules_from_string(options.patterns);
  const auto start = std::chrono::steady_clock::now();
  std::ostream& log = options.log ? *options.log : std::cerr;
  OptimizeModelReport report;
  report.nodes_before = count_nodes(model);
  // Before the upgrade: the bodies import the opset of the file.
  report.inlined = steps::inline_functions(model, options.inline_functions, options.verbose, log);
  if (options.target_opset) upgrade_opset(model, options.target_opset);
  ir::Graph& g = *model.graph;
  const std::vector<std::string> interface = steps::interface_names(g);

  steps::read_constants_one_way(model);
  report.merged += steps::merge_duplicates(g);
  // Constant chains (position ids, masks) fold before types are inferred: their values then give
  // static shapes our rules know, where ONNX's inference would be needed on the chain itself.
  if (options.constant_folding) report.folded += steps::fold_and_clean(model).nodes;
  const auto infer_types = [&] { steps::infer_types(model, options.verbose, log); };
  infer_types();
  if (options.constant_folding)
    report.folded += steps::fold_typed(model, infer_types).nodes;  // Shapes now static

  rewrite::OptimizeOptions rewrite_options{.verbose = options.verbose, .log = &log};
  rewrite_options.explain = options.explain;
  rewrite_options.on_iteration = options.on_iteration;
  if (options.constant_folding)
    rewrite_options.fold_constants = steps::fold_what_rules_make(g, report.folded);
  report.rules = rewrite::optimize(model, rules, rewrite_options);
  // An If the rules decided (a shape test they made constant) becomes its branch in the folding after
  // them: the values behind it, typed only now, are optimized again.
  while (options.constant_folding) {
    const steps::Folded folded = steps::fold_typed(model, infer_types);
    report.folded += folded.nodes;
    if (!folded.ifs) break;
    report.rules = rewrite::optimize(model, rules, rewrite_options, std::move(report.rules));
  }
  // Folding copies constants (Identity(mask) is a second mask table) and rules make new ones.
  report.merged += steps::merge_duplicates(g);
  steps::omit_unread_outputs(model);

  std::vector<FusionWaitingForOpset> fusions = fusions_waiting_for_opset(model, rules);
  report.waiting = rules_waiting_for_opset(fusions);
  report.waiting_sets = rules_waiting_for_set(model, rules);
  if (options.intermediate_functions)
    report.outlined = outline_intermediate_functions(model, std::move(fusions));
  report.nodes_after = count_nodes(model);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (options.verbose >= 1)
    log << "[xexp.optimize] " << report.nodes_before << " -> " << report.nodes_after << " nodes, "
        << report.folded << " folded\n";
  if (steps::interface_names(g) != interface)
    throw Error(
        "the optimization changed the names of the graph inputs or outputs (a bug in a rule or the driver)");
  return report;
}

}  // namespace xexp::optimizer
