#pragma once
// What `xexp optimize` takes: the rule set, folding, an opset upgrade, which local functions are inlined
// first, stage 1 of the LLM fusions, logging. optimize_model (optimize_model.hpp) reads them.
#include <array>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#include "xexp/core/error.hpp"
#include "xexp/rewrite/driver.hpp"

namespace xexp::optimizer {

inline constexpr const char* kDefaultPatterns = "default+onnxruntime";

// Which local functions optimize_model inlines before the rules run (the others stay functions, each
// body optimized on its own). Unless None, that includes the calls of domain `intermediate` a previous
// run left (stage 1): the rules decide again what their bodies become.
enum class InlineFunctions {
  OpLibraries,  // an exporter's single-op functions (functions::is_op_library_function)
  All,
  None,
};

// The modes by name, as `xexp optimize --inline-functions` and Python's optimize take them.
inline constexpr std::array<std::pair<std::string_view, InlineFunctions>, 3> kInlineFunctionsModes{
    {{"op-libraries", InlineFunctions::OpLibraries},
     {"all", InlineFunctions::All},
     {"none", InlineFunctions::None}}};

inline InlineFunctions inline_functions_from_string(std::string_view mode) {
  std::string names;
  for (const auto& [name, value] : kInlineFunctionsModes) {
    if (name == mode) return value;
    names += (names.empty() ? "" : ", ") + std::string(name);
  }
  throw Error("inline functions: '" + std::string(mode) + "' is none of " + names);
}

struct OptimizeModelOptions {
  std::string patterns = kDefaultPatterns;  // a rewrite::rules_from_string spec
  bool constant_folding = true;
  int64_t target_opset = 0;  // upgrade the default domain to this opset first (upgrade_opset); 0: keep it
  InlineFunctions inline_functions = InlineFunctions::OpLibraries;
  // Stage 1 of the LLM fusions: the blocks an opset below 23 holds back become intermediate function
  // calls (optimizer/intermediate_functions.hpp); false leaves those nodes as they are.
  bool intermediate_functions = true;
  int verbose = 0;           // rewrite::OptimizeOptions::verbose
  std::string explain = {};  // rewrite::OptimizeOptions::explain: why this rule did not match, node by node
  std::ostream* log = nullptr;              // std::cerr when null
  rewrite::ProgressHook on_iteration = {};  // rewrite::OptimizeOptions::on_iteration
};

}  // namespace xexp::optimizer
