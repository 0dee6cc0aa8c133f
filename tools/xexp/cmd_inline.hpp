#pragma once
// xexp inline MODEL -o OUT [--keep NAME ...]: replaces every call of a local function by its body
// (onnx.inliner naming: internal names get "__<k>" for the k-th call site) and removes the functions.
#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "model_files.hpp"
#include "xexp/functions/inliner.hpp"
#include "xexp/onnx.hpp"

namespace xexp::cli {

inline void add_inline_command(CLI::App& app) {
  struct Args {
    std::string model, output;
    std::vector<std::string> keep;
    int64_t max_nodes = functions::InlineOptions{}.max_nodes;
    LoadOptions load;
    SaveArgs save;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("inline", "Inline the local functions of a model");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("-o,--output", args->output, "Where to write the inlined model")->required();
  cmd->add_option("--keep", args->keep, "Names of functions to keep as functions (their calls stay)");
  add_max_nodes_option(cmd, args->max_nodes);
  add_load_options(cmd, args->load);
  add_save_options(cmd, args->save);
  cmd->callback([args] {
    check_not_overwriting(args->model, args->output);
    ir::Model model = load_model(args->model, args->load);
    check_not_overwriting(args->model, model, args->output, args->save.options());
    for (const std::string& name : args->keep)
      if (std::none_of(model.functions.begin(), model.functions.end(),
                       [&](const ir::Function& f) { return f.name == name; }))
        throw Error("--keep: the model has no local function '" + name + "'");
    const std::size_t functions_before = model.functions.size();
    functions::InlineOptions options;
    options.max_nodes = args->max_nodes;
    options.inline_function = [&](const ir::Function& f) {
      return std::find(args->keep.begin(), args->keep.end(), f.name) == args->keep.end();
    };
    functions::inline_functions(model, options);
    std::cout << "inlined: " << functions_before - model.functions.size() << " functions removed, "
              << model.functions.size() << " kept, " << model.graph->node_count() << " nodes\n";
    save_model(std::move(model), args->output, args->save.options());
  });
}

}  // namespace xexp::cli
