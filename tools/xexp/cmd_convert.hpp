#pragma once
// xexp convert MODEL -o OUT: loads and saves, nothing else (what a round trip through xexp keeps).
#include <filesystem>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "xexp/onnx.hpp"

namespace xexp::cli {

// Input files are never modified: refuse an output that is the input itself.
inline void check_not_overwriting(const std::string& input, const std::string& output) {
  std::error_code ec;
  if (std::filesystem::exists(output, ec) && std::filesystem::equivalent(input, output, ec))
    throw Error("the output '" + output + "' is the input model; choose another file");
}

inline void add_convert_command(CLI::App& app) {
  struct Args {
    std::string model, output;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("convert", "Load a model and save it again");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("-o,--output", args->output, "Where to write the model")->required();
  cmd->callback([args] {
    check_not_overwriting(args->model, args->output);
    save_model(load_model(args->model), args->output);
  });
}

}  // namespace xexp::cli
