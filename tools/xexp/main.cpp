// xexp: the command line tool. Each subcommand lives in its own cmd_<name>.hpp and is registered
// here with one line; without a subcommand, xexp runs its main job (main_job.hpp).
#include <CLI/CLI.hpp>

#include "cli_errors.hpp"
#include "cmd_compare.hpp"
#include "cmd_convert.hpp"
#include "cmd_dot.hpp"
#include "cmd_inline.hpp"
#include "cmd_optimize.hpp"
#include "cmd_patterns.hpp"
#include "cmd_print.hpp"
#include "cmd_run.hpp"
#include "main_job.hpp"

int main(int argc, char** argv) {
  CLI::App app{"xexp: build, rewrite, optimize and inline ONNX graphs.\n"
               "Without a command: builds the demo LLM, optimizes it, prints it before and after and writes\n"
               "xexp_demo.onnx and xexp_demo.optimized.onnx.",
               "xexp"};
  app.set_version_flag("--version", std::string("xexp ") + XEXP_VERSION);
  app.require_subcommand(0, 1);

  xexp::cli::add_print_command(app);
  xexp::cli::add_convert_command(app);
  xexp::cli::add_optimize_command(app);
  xexp::cli::add_inline_command(app);
  xexp::cli::add_patterns_command(app);
  xexp::cli::add_run_command(app);
  xexp::cli::add_compare_command(app);
  xexp::cli::add_dot_command(app);

  app.callback([&app] {
    if (app.get_subcommands().empty()) xexp::cli::run_main_job();
  });
  return xexp::cli::run(app, argc, argv);
}
