#pragma once
// xexp run MODEL [--inputs F.pb ...] [--random] [--save-outputs DIR] [--dump-intermediates FILE.onnx]:
// runs a model on the reference evaluator and prints a summary of each output.
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "input_options.hpp"
#include "model_files.hpp"
#include "progress.hpp"
#include "xexp/onnx.hpp"
#include "xexp/tools/dump.hpp"
#include "xexp/tools/run.hpp"

namespace xexp::cli {

// A file name for a tensor name: path separators would put it elsewhere.
inline std::string file_name_for(std::string name) {
  for (char& c : name)
    if (c == '/' || c == '\\') c = '_';
  return name;
}

inline void add_run_command(CLI::App& app) {
  struct Args {
    std::string model, save_outputs, dump;
    int64_t max_loop_iterations = eval::RunOptions{}.max_loop_iterations;
    int64_t max_nodes = eval::RunOptions{}.max_nodes;
    InputArgs inputs;
    LoadOptions load;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("run", "Run a model with the reference evaluator and summarize its outputs");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  add_input_options(cmd, args->inputs);
  cmd->add_option("--save-outputs", args->save_outputs, "Save each output as DIR/<output name>.pb");
  cmd->add_option("--dump-intermediates", args->dump,
                  "Save the inputs and every intermediate result as Constant nodes of one ONNX file");
  cmd->add_option("--max-loop-iterations", args->max_loop_iterations,
                  "Iterations one Loop node may run before the run stops with an error")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  add_max_nodes_option(cmd, args->max_nodes);
  add_load_options(cmd, args->load);
  cmd->callback([args] {
    if (!args->dump.empty()) check_not_overwriting(args->model, args->dump);
    const ir::Model model = load_model(args->model, args->load);
    if (!args->dump.empty()) check_not_overwriting(model, args->dump);
    const tools::Feeds feeds = tools::make_feeds(*model.graph, args->inputs.options());
    std::vector<std::pair<std::string, Tensor>> intermediates;
    eval::RunOptions options;
    options.max_loop_iterations = args->max_loop_iterations;
    options.max_nodes = args->max_nodes;
    ProgressLine progress;
    options.on_node = [&progress](std::size_t evaluated, std::size_t total) {
      progress.update([&] { return "run: " + std::to_string(evaluated) + "/" + std::to_string(total) + " nodes evaluated"; });
    };
    if (!args->dump.empty())
      options.on_result = [&intermediates](const eval::ResultInfo& r) {
        if (r.kind == eval::ResultKind::Input || r.kind == eval::ResultKind::Result) intermediates.emplace_back(r.name, r.value);
      };
    const std::vector<Tensor> outputs = tools::run_model(model, feeds, options);
    progress.erase();
    const std::vector<ir::ValueId>& names = model.graph->outputs();
    if (!args->save_outputs.empty()) std::filesystem::create_directories(args->save_outputs);
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      const std::string& name = model.graph->value(names[k]).name;
      std::cout << name << ": " << tools::summarize_tensor(outputs[k]) << "\n";
      if (args->save_outputs.empty()) continue;
      const std::string path = (std::filesystem::path(args->save_outputs) / (file_name_for(name) + ".pb")).string();
      check_not_overwriting(args->model, path);
      for (const std::string& input : args->inputs.files) check_not_overwriting(input, path);
      save_tensor(outputs[k], name, path);
    }
    if (!args->dump.empty()) {
      tools::save_intermediates(intermediates, args->dump);
      std::cout << "wrote " << intermediates.size() << " intermediate results to " << args->dump << "\n";
    }
  });
}

}  // namespace xexp::cli
