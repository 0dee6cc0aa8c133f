#pragma once
// How commands read a model and where they may write: the loading options every command shares
// (--allow-external-outside), and the rule that an output never replaces an input file (the model or
// one of its external data files).
#include <filesystem>
#include <set>
#include <string>

#include <CLI/CLI.hpp>

#include "xexp/onnx.hpp"

namespace xexp::cli {

inline void add_load_options(CLI::App* cmd, LoadOptions& options) {
  cmd->add_flag("--allow-external-outside", options.allow_external_outside,
                "Let external data name files outside the model's folder (absolute paths, '..', links)");
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

}  // namespace xexp::cli
