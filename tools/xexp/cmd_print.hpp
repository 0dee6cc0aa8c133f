#pragma once
// xexp print MODEL: the model as text (see xexp/tools/printer.hpp).
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "model_files.hpp"
#include "xexp/infer/model.hpp"
#include "xexp/onnx.hpp"
#include "xexp/tools/printer.hpp"

namespace xexp::cli {

inline void add_print_command(CLI::App& app) {
  struct Args {
    std::string model;
    tools::PrettyOptions options;
    LoadOptions load;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("print", "Print a model as text: inputs, initializers, nodes, outputs, functions");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("--max-values", args->options.max_init_values, "Show the values of initializers up to this size")
      ->capture_default_str();
  cmd->add_flag("!--no-indent", args->options.indent, "Do not indent nodes by data-flow depth");
  cmd->add_flag("!--no-functions", args->options.functions, "Do not print local functions");
  args->options.types = true;
  cmd->add_flag("!--no-types", args->options.types, "Do not infer and print the type and shape of node outputs");
  add_load_options(cmd, args->load);
  cmd->callback([args] {
    ir::Model model = load_model(args->model, args->load);
    if (args->options.types) infer::infer_model_types(model);
    std::cout << tools::pretty(model, args->options);
  });
}

}  // namespace xexp::cli
