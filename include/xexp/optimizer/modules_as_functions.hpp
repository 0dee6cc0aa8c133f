#pragma once
// `xexp optimize MODEL --modules-as-functions`: the modules of a torch export become local functions
// (functions/torch_modules.hpp), then optimize_model works on the main graph and on each function body
// on its own. Constants are folded on the flat graph first, types inferred in between as
// optimize_model does: a function body has no initializers to hold folded results (optimize_model folds
// only the main graph), so the shape chains an exporter writes inside a module (Constant -> Unsqueeze ->
// Concat -> Reshape, Shape of a static input) must be constants before they move into a body, where
// they come back as Constant nodes the rules read.
#include "xexp/functions/torch_modules.hpp"
#include "xexp/infer/model.hpp"
#include "xexp/optimizer/optimize_model.hpp"
#include "xexp/optimizer/steps.hpp"

namespace xexp::optimizer {

// Optimizes `model` in place, leaving it with its modules as local functions. The report counts the
// nodes of the flat model before and of the main graph and the bodies after. Throws xexp::Error for an
// unknown pattern name before touching the model.
inline OptimizeModelReport optimize_modules_as_functions(ir::Model& model,
                                                         const OptimizeModelOptions& options = {},
                                                         const functions::TorchModuleOptions& modules = {}) {
  rewrite::rules_from_string(options.patterns);
  const std::size_t flat_nodes = count_nodes(model);
  // The upgrade converts the flat model, before its modules become functions.
  if (options.target_opset) upgrade_opset(model, options.target_opset);
  OptimizeModelOptions bodies = options;
  bodies.target_opset = 0;
  std::size_t folded = 0;
  if (options.constant_folding) {
    ir::constant_nodes_to_initializers(*model.graph);
    folded += steps::fold_and_clean(model).nodes;
    const auto infer_types = [&] { infer::infer_model_types(model); };
    infer_types();
    folded += steps::fold_typed(model, infer_types).nodes;
  }
  model = functions::export_torch_modules_as_functions(std::move(model), modules);
  OptimizeModelReport report = optimize_model(model, bodies);
  report.nodes_before = flat_nodes;
  report.folded += folded;
  return report;
}

}  // namespace xexp::optimizer
