#pragma once
// What `xexp` does without arguments (and `xexp optimize` without a model): build the built-in demo
// LLM, print it, optimize it (tools::optimize_model), print it again with what each rule did, and write
// both models to the current directory: xexp_demo.onnx and xexp_demo.optimized.onnx.
#include <iostream>
#include <string>

#include "xexp/builder.hpp"
#include "xexp/onnx.hpp"
#include "xexp/tools/optimize.hpp"
#include "xexp/tools/printer.hpp"

namespace xexp::cli {

inline constexpr const char* kDemoModelFile = "xexp_demo.onnx";
inline constexpr const char* kDemoOptimizedFile = "xexp_demo.optimized.onnx";

inline void run_main_job(tools::OptimizeModelOptions options = {}) {
  if (!options.log) options.log = &std::cout;
  ir::Model model = build_demo_llm();
  std::cout << "----- demo LLM\n" << tools::pretty(model);
  save_model(model, kDemoModelFile);
  std::cout << "wrote " << kDemoModelFile << "\n";
  const tools::OptimizeModelReport report = tools::optimize_model(model, options);
  std::cout << "----- demo LLM optimized with " << options.patterns
            << (options.constant_folding ? " and constant folding" : "") << "\n"
            << tools::pretty(model) << tools::format_report(report);
  save_model(std::move(model), kDemoOptimizedFile);
  std::cout << "wrote " << kDemoOptimizedFile << "\n";
}

}  // namespace xexp::cli
