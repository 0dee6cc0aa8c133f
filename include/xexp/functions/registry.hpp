#pragma once
// Adding a local function to a model the way experimental-experiment's add_function does: an identical
// function already registered under the same name is reused (two nn.Linear of the same size become one
// function), a different body under a taken name is renamed <name>_l2l, <name>_l3l, ...
// (merge_any_name: an identical function under any name is reused.) A model of an IR version older
// than 8 moves to 8, the first with local functions.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "xexp/core/error.hpp"
#include "xexp/functions/same_function.hpp"
#include "xexp/ir/model.hpp"

namespace xexp::functions {

// The first IR version with model-local functions.
inline constexpr int64_t kFunctionsIrVersion = 8;

struct AddFunctionOptions {
  bool merge_allowed = true;   // reuse an identical function with the same name
  bool rename_allowed = true;  // else rename the new one <name>_l<k>l
  // Reuse an identical function of the same domain whatever its name: when module types are unknown
  // (a torch export names q_proj and k_proj, not their class), equal bodies still become one function.
  bool merge_any_name = false;
};

// The name of the function with this key that holds `f`: the existing identical one, or `f` itself
// added (renamed when needed). A domain the model does not import yet is imported at version 1.
inline std::string add_function(ir::Model& model, ir::Function f, const AddFunctionOptions& options = {}) {
  if (options.merge_any_name)
    for (const ir::Function& existing : model.functions)
      if (existing.domain == f.domain && same_function(existing, f)) return existing.name;
  const std::string base = f.name;
  for (int k = 1;; ++k) {
    const std::string candidate = k == 1 ? base : base + "_l" + std::to_string(k) + "l";
    const ir::Function* existing = model.find_function(f.domain, candidate);
    if (!existing) {
      f.name = candidate;
      if (!model.opset(f.domain)) model.opsets.push_back({f.domain, 1, {}});
      model.ir_version = std::max<int64_t>(model.ir_version, kFunctionsIrVersion);
      model.functions.push_back(std::move(f));
      return candidate;
    }
    if (options.merge_allowed && same_function(*existing, f)) return candidate;
    if (!options.rename_allowed)
      throw Error("a different function with this name is already registered",
                  {.node = f.domain + "." + base, .value = {}});
  }
}

}  // namespace xexp::functions
