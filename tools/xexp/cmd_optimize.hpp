#pragma once
// xexp optimize [MODEL] -o OUT [--patterns SPEC] [--target-opset N] [--verbose N] [--explain RULE] [--stats]
// [--no-constant-folding] [--no-intermediate-functions] [--inline-functions MODE] [--modules-as-functions
// [--module-depth N]]: the calls of op-library functions inlined (or all, or none), the opset upgrade when
// asked for, constant folding and the pattern rules (optimizer::optimize_model); a line says which rules a newer
// opset would let fire, and the LLM blocks among those fusions become calls of intermediate functions
// (--no-intermediate-functions keeps their nodes). With --modules-as-functions, the modules of a torch export
// become local functions first and each body is optimized on its own (optimizer/modules_as_functions.hpp). Without
// MODEL it runs the main job on the demo LLM (main_job.hpp), with the same options. A model in domain aten
// (xexp.to_onnx's capture) is lowered to ONNX first (aten/lower.hpp).
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "model_files.hpp"
#include "main_job.hpp"
#include "progress.hpp"
#include "xexp/aten/lower.hpp"
#include "xexp/onnx.hpp"
#include "xexp/optimizer/optimize_model.hpp"
#include "xexp/optimizer/modules_as_functions.hpp"

namespace xexp::cli {

// The options `optimize` shares with the main job.
inline void add_optimizer_options(CLI::App& cmd, optimizer::OptimizeModelOptions& options, bool& stats) {
  cmd.add_option("--patterns", options.patterns,
                 "Rule sets and rules, e.g. default+onnxruntime-Cast (see `xexp patterns`)")
      ->capture_default_str();
  cmd.add_option("--verbose", options.verbose,
                 "Optimizer log level: 1 iterations, 2 patterns and STAT lines, 10 matches, 11 why each rule "
                 "did not match")
      ->capture_default_str();
  cmd.add_option("--explain", options.explain,
                 "For each node where RULE's root op type matched but RULE did not: the first condition or "
                 "sub-pattern that failed");
  cmd.add_option("--target-opset", options.target_opset,
                 "Upgrade the default ONNX domain to opset N (up to " + std::to_string(kMaxTargetOpset) +
                     ") before optimizing; without it the opset never changes")
      ->check(CLI::PositiveNumber);
  std::vector<std::string> modes;
  for (const auto& entry : optimizer::kInlineFunctionsModes) modes.emplace_back(entry.first);
  cmd.add_option_function<std::string>(
         "--inline-functions",
         [&options](const std::string& mode) {
           options.inline_functions = optimizer::inline_functions_from_string(mode);
         },
         "Local functions to inline before the rules: op-libraries (an exporter's single-op functions: "
         "onnxscript's torch_lib, experimental-experiment's aten domain, and the intermediate functions "
         "of a previous run), all or none; the others stay functions, each body optimized on its own")
      ->check(CLI::IsMember(modes))
      ->type_name("MODE")
      ->default_str("op-libraries");
  cmd.add_flag(
      "--no-intermediate-functions{false}", options.intermediate_functions,
      "Leave the attention, rotary and RMSNorm blocks an opset below 23 holds back as plain nodes, rather "
      "than as calls of local functions in domain intermediate, which --target-opset 23 or the onnxruntime "
      "set fuses");
  cmd.add_flag("--stats", stats, "Print what each rule did");
  cmd.add_flag("--no-constant-folding{false}", options.constant_folding, "Do not fold constant nodes");
}

inline void add_optimize_command(CLI::App& app) {
  struct Args {
    std::string model, output;
    optimizer::OptimizeModelOptions options;
    bool stats = false;
    bool modules_as_functions = false;
    std::size_t module_depth = 0;
    LoadOptions load;
    SaveArgs save;
  };
  auto args = std::make_shared<Args>();
  args->options.log = &std::cout;
  CLI::App* cmd = app.add_subcommand(
      "optimize", "Fold constants and apply the pattern rules; without MODEL, optimize the demo LLM");
  cmd->add_option("model", args->model, "ONNX model file (none: the demo LLM, as `xexp` alone does)");
  cmd->add_option("-o,--output", args->output, "Where to write the optimized model (required with MODEL)");
  add_optimizer_options(*cmd, args->options, args->stats);
  cmd->add_flag("--modules-as-functions", args->modules_as_functions,
                "Each torch module instance (from node names /h.0/attn/... or dynamo's name_scopes metadata) "
                "becomes a call of a local function in domain aten_local_function, identical bodies shared; "
                "the bodies are optimized one by one");
  cmd->add_option("--module-depth", args->module_depth,
                  "With --modules-as-functions on MODEL: only the N outermost module levels become functions "
                  "(0: all)")
      ->capture_default_str();
  add_load_options(cmd, args->load);
  add_save_options(cmd, args->save);
  cmd->callback([args] {
    // Progress would interleave with the log of --verbose and --explain.
    ProgressLine progress(args->options.verbose == 0 && args->options.explain.empty());
    optimizer::OptimizeModelOptions options = args->options;
    options.on_iteration = [&progress](const rewrite::OptimizeProgress& p) {
      progress.update([&p] {
        return "optimize: iteration " + std::to_string(p.iteration) + " at priority " + std::to_string(p.priority) +
               ", " + std::to_string(p.applied_total) + " rewrites, " + std::to_string(p.nodes) + " nodes left";
      });
    };
    if (args->model.empty()) {
      if (!args->output.empty())
        throw Error("--output needs a MODEL (without one, optimize writes " + std::string(kDemoModelFile) +
                    " and " + kDemoOptimizedFile + ")");
      run_main_job(options, args->modules_as_functions);
      return;
    }
    if (args->output.empty()) throw Error("optimize " + args->model + " needs -o OUT");
    rewrite::rules_from_string(options.patterns);  // a bad spec fails before the (maybe long) load
    check_not_overwriting(args->model, args->output);
    ir::Model model = load_model(args->model, args->load);
    check_not_overwriting(args->model, model, args->output, args->save.options());
    // xexp.to_onnx's capture (domain aten) is lowered first; the lowering makes the module functions.
    const bool captured = aten::is_aten_model(model);
    if (captured)
      model = aten::lower(model, {.opset = options.target_opset ? options.target_opset : aten::LowerOptions{}.opset,
                                  .module_functions = args->modules_as_functions,
                                  .module_depth = args->module_depth});
    const optimizer::OptimizeModelReport report =
        args->modules_as_functions && !captured
            ? optimizer::optimize_modules_as_functions(model, options, {.max_depth = args->module_depth})
            : optimizer::optimize_model(model, options);
    progress.erase();
    save_model(std::move(model), args->output, args->save.options());
    if (args->stats) std::cout << optimizer::format_report(report);
    std::cout << args->model << ": " << report.nodes_before << " -> " << report.nodes_after
              << " nodes, wrote " << args->output << "\n"
              << optimizer::format_waiting(report.waiting)
              << optimizer::format_waiting(report.waiting_sets, options.patterns);
    if (report.outlined)
      std::cout << "kept " << report.outlined
                << (report.outlined == 1 ? " fusion the opset holds back as a call of a local function"
                                         : " fusions the opset holds back as calls of local functions")
                << " in domain " << optimizer::kIntermediateDomain << "\n";
  });
}

}  // namespace xexp::cli
