#pragma once
// xexp compare A B [--inputs F.pb ...] [--random]: runs both models on the same inputs and prints their
// results side by side, aligned (see xexp/tools/compare.hpp).
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "input_options.hpp"
#include "model_files.hpp"
#include "xexp/onnx.hpp"
#include "xexp/tools/compare.hpp"

namespace xexp::cli {

inline void add_compare_command(CLI::App& app) {
  struct Args {
    std::string first, second;
    InputArgs inputs;
    std::size_t column_size = 0;
    LoadOptions load;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("compare", "Run two models on the same inputs and align their results side by side");
  cmd->add_option("first", args->first, "First ONNX model (left column)")->required();
  cmd->add_option("second", args->second, "Second ONNX model (right column)")->required();
  add_input_options(cmd, args->inputs);
  cmd->add_option("--column-size", args->column_size, "Width of each side (0: fit the longest name)")->capture_default_str();
  add_load_options(cmd, args->load);
  cmd->callback([args] {
    const ir::Model first = load_model(args->first, args->load);
    const ir::Model second = load_model(args->second, args->load);
    const tools::Feeds feeds = tools::make_feeds(*first.graph, args->inputs.options());
    std::cout << tools::compare_models(first, second, feeds).str(args->column_size);
  });
}

}  // namespace xexp::cli
