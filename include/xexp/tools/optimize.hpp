#pragma once
// The optimizer as a user runs it (`xexp optimize`): the calls of op-library functions are inlined
// (functions/op_library.hpp), the opset upgrade when asked for (onnx/opset_upgrade.hpp), Constant nodes
// become initializers, every value gets its type and shape (infer/model.hpp), constant folding, then
// the rules of a set string
// (rewrite::optimize) folding the nodes they create whose inputs are all constant, then constant
// folding once more for what the rewrites left constant. Graph input and output names never change:
// the driver keeps them, and optimize_model checks it, so that a caller's feeds and fetches still work.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <iomanip>
#include <iostream>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "xexp/eval/constant_if.hpp"
#include "xexp/eval/fold.hpp"
#include "xexp/functions/inliner.hpp"
#include "xexp/functions/op_library.hpp"
#include "xexp/functions/type_bodies.hpp"
#include "xexp/infer/model.hpp"
#include "xexp/ir/cleanup.hpp"
#include "xexp/ir/constant_node.hpp"
#include "xexp/ir/duplicates.hpp"
#include "xexp/ir/model.hpp"
#include "xexp/onnx/opset_upgrade.hpp"
#include "xexp/patterns/registry.hpp"
#include "xexp/rewrite/driver.hpp"
#include "xexp/rewrite/rule_set.hpp"
#include "xexp/tools/intermediate_functions.hpp"
#include "xexp/tools/rules_waiting.hpp"

namespace xexp::tools {

inline constexpr const char* kDefaultPatterns = "default+onnxruntime";

// Which local functions optimize_model inlines before the rules run (the others stay functions, each
// body optimized on its own). Unless None, that includes the calls of domain `intermediate` a previous
// run left (stage 1): the rules decide again what their bodies become.
enum class InlineFunctions {
  OpLibraries,  // an exporter's single-op functions (functions::is_op_library_function)
  All,
  None,
};

// The modes by name, as `xexp optimize --inline-functions` and Python's optimize take them.
inline constexpr std::array<std::pair<std::string_view, InlineFunctions>, 3> kInlineFunctionsModes{{
    {"op-libraries", InlineFunctions::OpLibraries}, {"all", InlineFunctions::All}, {"none", InlineFunctions::None}}};

inline InlineFunctions inline_functions_from_string(std::string_view mode) {
  std::string names;
  for (const auto& [name, value] : kInlineFunctionsModes) {
    if (name == mode) return value;
    names += (names.empty() ? "" : ", ") + std::string(name);
  }
  throw Error("inline functions: '" + std::string(mode) + "' is none of " + names);
}

struct OptimizeModelOptions {
  std::string patterns = kDefaultPatterns;  // a rewrite::rules_from_string spec
  bool constant_folding = true;
  int64_t target_opset = 0;      // upgrade the default domain to this opset first (upgrade_opset); 0: keep it
  InlineFunctions inline_functions = InlineFunctions::OpLibraries;
  // Stage 1 of the LLM fusions: the blocks an opset below 23 holds back become intermediate function
  // calls (tools/intermediate_functions.hpp); false leaves those nodes as they are.
  bool intermediate_functions = true;
  int verbose = 0;               // rewrite::OptimizeOptions::verbose
  std::string explain = {};      // rewrite::OptimizeOptions::explain: why this rule did not match, node by node
  std::ostream* log = nullptr;   // std::cerr when null
  rewrite::ProgressHook on_iteration = {};  // rewrite::OptimizeOptions::on_iteration
};

struct OptimizeModelReport {
  std::size_t nodes_before = 0, nodes_after = 0;  // main graph, its subgraphs and local functions
  std::size_t folded = 0;                         // nodes replaced by initializers, all steps together
  std::size_t merged = 0;                         // duplicated nodes and initializers merged
  std::size_t inlined = 0;                        // local functions inlined (InlineFunctions)
  std::size_t outlined = 0;                       // fusions kept as intermediate function calls
  double seconds = 0;
  rewrite::OptimizeStats rules;                   // what the rules did
  std::vector<RuleWaitingForOpset> waiting;       // what a newer opset would let the rules do
  std::vector<RuleWaitingForSet> waiting_sets;    // what the sets the spec leaves out would fuse
};

// Nodes of the main graph with its subgraphs, and of the local functions: what the report counts.
inline std::size_t count_nodes(const ir::Model& model) {
  std::size_t n = model.graph->node_count();
  ir::for_each_subgraph(*model.graph, [&](const ir::Graph& body) { n += body.node_count(); });
  for (const ir::Function& f : model.functions) n += f.body->node_count();
  return n;
}

namespace detail {

inline std::vector<std::string> names_of(const ir::Graph& g, const std::vector<ir::ValueId>& ids) {
  std::vector<std::string> names;
  for (ir::ValueId id : ids) names.push_back(g.value(id).name);
  return names;
}

struct Folded {
  std::size_t nodes = 0;  // nodes folded into constants
  std::size_t ifs = 0;    // Ifs replaced by their taken branch
};

// Folds constants over the whole graph and its subgraphs, then removes what the folded nodes no longer
// need (in the enclosing graphs too, for the values a body no longer reads).
inline Folded fold_and_clean(ir::Model& model) {
  std::size_t folded = eval::fold_constants(model);
  if (folded) {
    ir::remove_unused(*model.graph);
    ir::remove_unused_initializers(*model.graph);
  }
  eval::FoldOptions options;
  options.opset = model.opset("").value_or(options.opset);
  options.fold_graph_outputs = false;
  std::size_t in_subgraphs = 0;
  ir::for_each_subgraph(*model.graph, [&](ir::Graph& body) {
    const std::size_t n = eval::fold_constants(body, options);
    if (n) {
      ir::remove_unused(body);
      ir::remove_unused_initializers(body);
    }
    in_subgraphs += n;
  });
  if (in_subgraphs) ir::release_unread_captured(*model.graph);
  // An If whose condition folding made (or found) constant becomes its taken branch.
  std::size_t ifs = eval::inline_constant_ifs(*model.graph, options.opset);
  if (ifs) {
    ir::release_unread_captured(*model.graph);
    ir::remove_unused_initializers(*model.graph);
  }
  for (ir::Function& f : model.functions)
    if (const std::size_t n =
            eval::inline_constant_ifs(*f.body, ir::find_opset(f.opsets, "").value_or(options.opset))) {
      ir::release_unread_captured(*f.body);
      ir::initializers_to_constant_nodes(*f.body);  // the branch's constants: a function has no initializers
      ifs += n;
    }
  return {folded + in_subgraphs, ifs};
}

// Folding once types are known. An If that folding decides (a rank test) becomes its taken branch,
// whose outputs the inference before could not type: `infer_types` types the model again, which may
// decide the next If (silero's VAD tests the rank of its input, then of its spectrogram), until none
// goes. Returns what went in all.
template <class InferTypes>
Folded fold_typed(ir::Model& model, InferTypes&& infer_types) {
  Folded all;
  for (bool inlined = true; inlined;) {
    const Folded folded = fold_and_clean(model);
    all.nodes += folded.nodes;
    all.ifs += folded.ifs;
    inlined = folded.ifs > 0;
    if (inlined) infer_types();
  }
  return all;
}

// Inlines the functions `mode` selects; returns how many went. OpLibraries leaves them as they are when
// their opsets clash with the model's (the inliner refuses before changing anything); asked for all,
// the clash is the user's error.
inline std::size_t inline_functions(ir::Model& model, InlineFunctions mode, int verbose, std::ostream& log) {
  const auto selected = [mode](const ir::Function& f) {
    return mode == InlineFunctions::All ||
           (mode == InlineFunctions::OpLibraries &&
            (functions::is_op_library_function(f) || f.domain == kIntermediateDomain));
  };
  if (std::none_of(model.functions.begin(), model.functions.end(), selected)) return 0;
  const std::size_t before = model.functions.size();
  try {
    functions::inline_functions(model, {.inline_function = selected});
  } catch (const Error& e) {
    if (mode == InlineFunctions::All) throw;
    if (verbose >= 1) log << "[xexp.optimize] op-library functions kept: " << e.what() << "\n";
    return 0;
  }
  return before - model.functions.size();
}

// Equal initializers become one, then what is computed twice from the same values is computed once
// (ir/duplicates.hpp), in `g` and its subgraphs. Before folding: it would store a copy per duplicate (a
// weight every layer shares, transposed once per layer). Returns how many nodes and initializers went.
inline std::size_t merge_duplicates(ir::Graph& g) {
  std::size_t merged = ir::merge_equal_initializers(g) + ir::remove_duplicated_nodes(g);
  ir::for_each_subgraph(g, [&](ir::Graph& body) {
    merged += ir::merge_equal_initializers(body) + ir::remove_duplicated_nodes(body);
  });
  return merged;
}

// Whether `g` is the main graph or one of its subgraphs (those may hold initializers; a function
// body may not).
inline bool within(const ir::Graph& g, const ir::Graph& main) {
  const ir::Graph* root = &g;
  while (root->parent) root = root->parent;
  return root == &main;
}

}  // namespace detail

// Optimizes `model` in place. Throws xexp::Error for an unknown pattern name or a refused opset upgrade
// (before touching the model).
inline OptimizeModelReport optimize_model(ir::Model& model, const OptimizeModelOptions& options = {}) {
  const rewrite::RuleSet rules = rewrite::rules_from_string(options.patterns);
  const auto start = std::chrono::steady_clock::now();
  std::ostream& log = options.log ? *options.log : std::cerr;
  const std::size_t nodes_given = count_nodes(model);
  OptimizeModelReport report;
  report.nodes_before = nodes_given;
  // Before the upgrade: the bodies import the opset of the file.
  report.inlined = detail::inline_functions(model, options.inline_functions, options.verbose, log);
  if (options.target_opset) upgrade_opset(model, options.target_opset);
  ir::Graph& g = *model.graph;
  const std::vector<std::string> inputs = detail::names_of(g, g.inputs());
  const std::vector<std::string> outputs = detail::names_of(g, g.outputs());

  // Rules and folding then read every constant the same way (ir/constant_node.hpp).
  ir::constant_nodes_to_initializers(g);
  ir::for_each_subgraph(g, [](ir::Graph& body) { ir::constant_nodes_to_initializers(body); });
  for (ir::Function& f : model.functions) ir::constant_shorthands_to_value(*f.body);
  report.merged += detail::merge_duplicates(g);
  // Constant chains (position ids, masks) fold before types are inferred: their values then give
  // static shapes our rules know, where ONNX's inference would be needed on the chain itself.
  if (options.constant_folding) report.folded += detail::fold_and_clean(model).nodes;
  // Types on load: exporters write none, and most rules read them. A declared shape the nodes contradict
  // gives way to theirs (infer/model.hpp); function bodies that cannot be typed only leave their rules
  // unfired.
  const auto infer_types = [&] {
    if (model.functions.empty()) {
      for (const std::string& replaced : infer::infer_model_types(model))
        if (options.verbose >= 1) log << "[xexp.optimize] " << replaced << " (the node's shape is kept)\n";
      return;
    }
    try {
      functions::type_function_bodies(model);
    } catch (const Error& e) {
      if (options.verbose >= 1) log << "[xexp.optimize] function bodies left untyped: " << e.what() << "\n";
    }
  };
  infer_types();
  rewrite::OptimizeOptions rewrite_options{.verbose = options.verbose, .log = &log};
  rewrite_options.explain = options.explain;
  rewrite_options.on_iteration = options.on_iteration;
  if (options.constant_folding) {
    report.folded += detail::fold_typed(model, infer_types).nodes;  // Shape of values now static
    eval::FoldOptions fold_options;
    // Not in function bodies: they have no initializers to hold the results.
    rewrite_options.fold_constants = [fold_options, &report, main = &g](ir::Graph& graph, ir::NodeId id,
                                                                         int64_t opset) mutable {
      if (!detail::within(graph, *main)) return false;
      fold_options.opset = opset;
      fold_options.fold_graph_outputs = &graph == main;
      std::vector<ir::ValueId> added;
      if (!eval::fold_node(graph, id, fold_options, added)) return false;
      eval::append_initializers(graph, added);
      ++report.folded;
      return true;
    };
  }
  report.rules = rewrite::optimize(model, rules, rewrite_options);
  // An If the rules decided (a shape test they made constant) becomes its branch in the folding after
  // them: the values behind it, typed only now, are optimized again.
  while (options.constant_folding) {
    const detail::Folded folded = detail::fold_typed(model, infer_types);
    report.folded += folded.nodes;
    if (!folded.ifs) break;
    report.rules = rewrite::optimize(model, rules, rewrite_options, std::move(report.rules));
  }
  // Folding copies constants (Identity(mask) is a second mask table) and rules make new ones.
  report.merged += detail::merge_duplicates(g);
  // Fused normalizations are built with every output their kernels give; those nothing reads go.
  ir::omit_unread_optional_outputs(g);
  ir::for_each_subgraph(g, [](ir::Graph& body) { ir::omit_unread_optional_outputs(body); });
  for (ir::Function& f : model.functions) ir::omit_unread_optional_outputs(*f.body);
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

  if (detail::names_of(g, g.inputs()) != inputs || detail::names_of(g, g.outputs()) != outputs)
    throw Error("the optimization changed the names of the graph inputs or outputs (a bug in a rule or the driver)");
  return report;
}

// A table of what happened: the totals, then one row per rule and clean-up step that did something
// (all of them when `all_rules`).
inline std::string format_report(const OptimizeModelReport& report, bool all_rules = false) {
  std::ostringstream out;
  out << "optimized: " << report.nodes_before << " -> " << report.nodes_after << " nodes, "
      << report.folded << " folded, " << report.merged << " merged, ";
  if (report.inlined) out << report.inlined << " functions inlined, ";
  if (report.outlined) out << report.outlined << " fusions kept as intermediate functions, ";
  out << report.rules.iterations << " iterations, " << std::fixed << std::setprecision(3) << report.seconds * 1e3
      << " ms\n";
  out << "  " << std::left << std::setw(36) << "rule" << std::right << std::setw(3) << "P" << std::setw(9)
      << "tried" << std::setw(9) << "matched" << std::setw(9) << "applied" << std::setw(8) << "+nodes"
      << std::setw(8) << "-nodes" << std::setw(11) << "time(ms)" << "\n";
  auto row = [&](const rewrite::RuleStats& s, const std::string& priority) {
    if (!all_rules && s.applied == 0 && s.matched == 0) return;
    out << "  " << std::left << std::setw(36) << s.name << std::right << std::setw(3) << priority << std::setw(9)
        << s.tried << std::setw(9) << s.matched << std::setw(9) << s.applied << std::setw(8) << s.added
        << std::setw(8) << s.removed << std::setw(11) << std::setprecision(3)
        << (s.match_seconds + s.apply_seconds) * 1e3 << "\n";
  };
  for (const rewrite::RuleStats& s : report.rules.rules) row(s, std::to_string(s.priority));
  for (const rewrite::RuleStats& s : report.rules.cleanups) row(s, "-");
  return out.str();
}

}  // namespace xexp::tools
