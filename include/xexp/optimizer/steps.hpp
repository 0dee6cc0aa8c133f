#pragma once
// The steps of optimize_model (optimize_model.hpp), one function each, in the order it runs them; the
// modules-as-functions optimizer (modules_as_functions.hpp) runs the folding ones on the flat model.
#include <algorithm>
#include <cstddef>
#include <ostream>
#include <string>
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
#include "xexp/optimizer/intermediate_functions.hpp"
#include "xexp/optimizer/options.hpp"
#include "xexp/optimizer/report.hpp"
#include "xexp/rewrite/driver.hpp"
#include "xexp/rewrite/rule_set.hpp"

namespace xexp::optimizer::steps {

// The names of the graph's inputs and outputs: the driver keeps them, optimize_model checks it, so that a
// caller's feeds and fetches still work.
inline std::vector<std::string> interface_names(const ir::Graph& g) {
  std::vector<std::string> names;
  for (const std::vector<ir::ValueId>* ids : {&g.inputs(), &g.outputs()})
    for (ir::ValueId id : *ids) names.push_back(g.value(id).name);
  return names;
}

// Constant nodes become initializers in the main graph and its subgraphs, and function bodies write
// their constants in one form: rules and folding then read every constant the same way
// (ir/constant_node.hpp).
inline void read_constants_one_way(ir::Model& model) {
  ir::constant_nodes_to_initializers(*model.graph);
  ir::for_each_subgraph(*model.graph, [](ir::Graph& body) { ir::constant_nodes_to_initializers(body); });
  for (ir::Function& f : model.functions) ir::constant_shorthands_to_value(*f.body);
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

// Types on load: exporters write none, and most rules read them. A declared shape the nodes contradict
// gives way to theirs (infer/model.hpp); function bodies that cannot be typed only leave their rules
// unfired.
inline void infer_types(ir::Model& model, int verbose, std::ostream& log) {
  if (model.functions.empty()) {
    for (const std::string& replaced : infer::infer_model_types(model))
      if (verbose >= 1) log << "[xexp.optimize] " << replaced << " (the node's shape is kept)\n";
    return;
  }
  try {
    functions::type_function_bodies(model);
  } catch (const Error& e) {
    if (verbose >= 1) log << "[xexp.optimize] function bodies left untyped: " << e.what() << "\n";
  }
}

// Whether `g` is the main graph or one of its subgraphs (those may hold initializers; a function
// body may not).
inline bool within(const ir::Graph& g, const ir::Graph& main) {
  const ir::Graph* root = &g;
  while (root->parent) root = root->parent;
  return root == &main;
}

// The driver's hook folding a node a rule made whose inputs are all constant, counted in `folded`. Not
// in function bodies: they have no initializers to hold the results.
inline rewrite::FoldHook fold_what_rules_make(const ir::Graph& main, std::size_t& folded) {
  return [&main, &folded, options = eval::FoldOptions{}](ir::Graph& graph, ir::NodeId id,
                                                         int64_t opset) mutable {
    if (!within(graph, main)) return false;
    options.opset = opset;
    options.fold_graph_outputs = &graph == &main;
    std::vector<ir::ValueId> added;
    if (!eval::fold_node(graph, id, options, added)) return false;
    eval::append_initializers(graph, added);
    ++folded;
    return true;
  };
}

// Fused normalizations are built with every output their kernels give; those nothing reads go.
inline void omit_unread_outputs(ir::Model& model) {
  ir::omit_unread_optional_outputs(*model.graph);
  ir::for_each_subgraph(*model.graph, [](ir::Graph& body) { ir::omit_unread_optional_outputs(body); });
  for (ir::Function& f : model.functions) ir::omit_unread_optional_outputs(*f.body);
}

}  // namespace xexp::optimizer::steps
