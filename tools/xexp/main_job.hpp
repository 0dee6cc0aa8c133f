#pragma once
// What `xexp` does without arguments (and `xexp optimize` without a model): build the built-in demo
// LLM, print it, optimize it (optimizer::optimize_model), print it again with what each rule did, and write
// both models to the current directory: xexp_demo.onnx and xexp_demo.optimized.onnx. With
// modules_as_functions, every torch-like module of the demo becomes a local function
// (experimental-experiment's tutorial "ONNX with submodules") and the optimizer works inside each function.
#include <iostream>
#include <string>

#include "xexp/builder.hpp"
#include "xexp/functions/module_export.hpp"
#include "xexp/onnx.hpp"
#include "xexp/optimizer/optimize_model.hpp"
#include "xexp/tools/printer.hpp"

namespace xexp::cli {

inline constexpr const char* kDemoModelFile = "xexp_demo.onnx";
inline constexpr const char* kDemoOptimizedFile = "xexp_demo.optimized.onnx";

inline ir::Model demo_model(bool modules_as_functions) {
  if (!modules_as_functions) return build_demo_llm();
  GraphBuilder g(18, 9);
  build_demo_llm(g);
  return functions::export_modules_as_functions(g);
}

inline void run_main_job(optimizer::OptimizeModelOptions options = {}, bool modules_as_functions = false) {
  if (!options.log) options.log = &std::cout;
  ir::Model model = demo_model(modules_as_functions);
  std::cout << "----- demo LLM" << (modules_as_functions ? " with modules as local functions" : "") << "\n"
            << tools::pretty(model);
  save_model(model, kDemoModelFile);
  std::cout << "wrote " << kDemoModelFile << "\n";
  const optimizer::OptimizeModelReport report = optimizer::optimize_model(model, options);
  std::cout << "----- demo LLM optimized with " << options.patterns
            << (options.constant_folding ? " and constant folding" : "") << "\n"
            << tools::pretty(model) << optimizer::format_report(report);
  save_model(std::move(model), kDemoOptimizedFile);
  std::cout << "wrote " << kDemoOptimizedFile << "\n";
}

}  // namespace xexp::cli
