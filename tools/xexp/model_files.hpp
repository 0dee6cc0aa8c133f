#pragma once
// How commands read a model and how they write one: the loading options every command shares
// (--allow-external-outside) and the bound on expanding its local functions (--max-nodes), the saving options of the commands that write a model (--external-data,
// --no-external-data, --external-data-threshold), and the rule that no file written (the model or its
// external data) replaces an input file (the model or one of its external data files).
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "xexp/onnx.hpp"

namespace xexp::cli {

inline void add_load_options(CLI::App* cmd, LoadOptions& options) {
  cmd->add_flag("--allow-external-outside", options.allow_external_outside,
                "Let external data name files outside the model's folder (absolute paths, '..', links)");
}

// --max-nodes, shared by the commands that expand local functions (run, inline).
inline void add_max_nodes_option(CLI::App* cmd, int64_t& max_nodes) {
  cmd->add_option("--max-nodes", max_nodes,
                  "Nodes the main graph may hold once every local function call is expanded; past it the "
                  "command stops with an error naming the call")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
}

struct SaveArgs {
  bool external = false, no_external = false;
  std::size_t threshold = SaveOptions{}.external_data_threshold;

  SaveOptions options() const {
    SaveOptions o;
    o.external_data = external ? ExternalData::Always : no_external ? ExternalData::Never : ExternalData::Auto;
    o.external_data_threshold = threshold;
    return o;
  }
};

inline void add_save_options(CLI::App* cmd, SaveArgs& args) {
  CLI::Option* on = cmd->add_flag(
      "--external-data", args.external,
      "Write the tensors of at least --external-data-threshold bytes to OUT.data next to OUT (by default "
      "they go there when the input had external data or when OUT would pass protobuf's 2 GB limit)");
  CLI::Option* off = cmd->add_flag("--no-external-data", args.no_external,
                                   "Keep every tensor inside OUT (which then cannot pass 2 GB)");
  on->excludes(off);
  cmd->add_option("--external-data-threshold", args.threshold,
                  "Smallest tensor, in bytes (or with a unit: 4KB, 1MB), that goes to external data")
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
}

// The files saving to `output` may write: the model, and its external data unless saving never writes one.
inline std::vector<std::string> files_written(const std::string& output, const SaveOptions& options) {
  std::vector<std::string> files = {output};
  if (options.external_data != ExternalData::Never)
    files.push_back(detail::directory_of(output) + "/" + external_data_location(output, options));
  return files;
}

// Refuses `output` when it is the file `input` (same path, or a link to it).
inline void check_not_overwriting(const std::string& input, const std::string& output) {
  std::error_code ec;
  if (std::filesystem::exists(output, ec) && std::filesystem::equivalent(input, output, ec))
    throw Error("the output '" + output + "' is an input file ('" + input + "'); choose another file");
}

// Refuses `output` when it is one of the external data files `model` was read from.
inline void check_not_overwriting(const ir::Model& model, const std::string& output) {
  std::set<std::string> seen;
  for (ir::ValueId id : model.graph->initializers()) {
    const auto& init = model.graph->value(id).initializer;
    const auto* stored = init ? dynamic_cast<const ProtoTensorStorage*>(init->storage().get()) : nullptr;
    if (stored && stored->mapped_file() && seen.insert(stored->mapped_file()->path()).second)
      check_not_overwriting(stored->mapped_file()->path(), output);
  }
}

// Refuses to save `model`, read from `input`, to `output` when a file saving writes is one it was read from.
inline void check_not_overwriting(const std::string& input, const ir::Model& model, const std::string& output,
                                  const SaveOptions& options) {
  for (const std::string& written : files_written(output, options)) {
    check_not_overwriting(input, written);
    check_not_overwriting(model, written);
  }
}

}  // namespace xexp::cli
