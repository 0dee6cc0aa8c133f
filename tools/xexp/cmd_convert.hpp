#pragma once
// xexp convert MODEL -o OUT: loads and saves, nothing else (what a round trip through xexp keeps).
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "model_files.hpp"
#include "xexp/onnx.hpp"

namespace xexp::cli {

inline void add_convert_command(CLI::App& app) {
  struct Args {
    std::string model, output;
    LoadOptions load;
    SaveArgs save;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("convert", "Load a model and save it again");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("-o,--output", args->output, "Where to write the model")->required();
  add_load_options(cmd, args->load);
  add_save_options(cmd, args->save);
  cmd->callback([args] {
    check_not_overwriting(args->model, args->output);
    ir::Model model = load_model(args->model, args->load);
    check_not_overwriting(args->model, model, args->output, args->save.options());
    save_model(std::move(model), args->output, args->save.options());
  });
}

}  // namespace xexp::cli
