#pragma once
// The options choosing the inputs of a run, shared by `xexp run` and `xexp compare`.
#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "xexp/tools/inputs.hpp"

namespace xexp::cli {

struct InputArgs {
  std::vector<std::string> files;
  bool random = false;
  uint64_t seed = 0;
  std::vector<std::string> dims;  // name=value
  int64_t default_dim = 2;

  tools::InputOptions options() const {
    tools::InputOptions o{.files = files, .random = random, .random_options = {}};
    o.random_options.seed = seed;
    o.random_options.default_dim = default_dim;
    for (const std::string& d : dims) {
      const auto eq = d.find('=');
      int64_t value = -1;
      try {
        if (eq != std::string::npos && eq > 0) value = std::stoll(d.substr(eq + 1));
      } catch (const std::exception&) {
      }
      if (value < 0) throw Error("--dim expects name=size with a size >= 0, got '" + d + "'");
      o.random_options.symbols[d.substr(0, eq)] = value;
    }
    return o;
  }
};

inline void add_input_options(CLI::App* cmd, InputArgs& args) {
  cmd->add_option("--inputs", args.files, "TensorProto files (.pb), one per model input, in the order of the inputs")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--random", args.random, "Random values for the inputs no --inputs file gives");
  cmd->add_option("--seed", args.seed, "Seed of the random inputs")->capture_default_str();
  cmd->add_option("--dim", args.dims, "Size of a symbolic dimension for random inputs, as name=size (repeatable)");
  cmd->add_option("--default-dim", args.default_dim, "Size of the symbolic dimensions no --dim gives")->capture_default_str();
}

}  // namespace xexp::cli
