#pragma once
// xexp dot MODEL [OPTIMIZED] [-o OUT] [--svg]: a model as a Graphviz drawing (see xexp/tools/dot.hpp).
// Given two models, draws the second, its nodes made by the optimizer's rules marked with the rule's
// name. --svg renders the drawing with Graphviz's `dot` program (Debian package graphviz).
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "model_files.hpp"
#include "xexp/functions/type_bodies.hpp"
#include "xexp/infer/model.hpp"
#include "xexp/onnx.hpp"
#include "xexp/tools/dot.hpp"

namespace xexp::cli {

inline void write_text_file(const std::string& text, const std::string& path) {
  detail::TemporaryFile file(path);
  detail::write_all(file.fd(), text, path);
  file.commit();
}

inline std::string first_line_of(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Renders Graphviz source as SVG with the `dot` program found in PATH, into `output` (stdout when empty).
// Run without a shell: paths need no quoting.
inline void render_svg(const std::string& source, const std::string& output) {
  const std::filesystem::path scratch = std::filesystem::temp_directory_path() / "xexp_dot";
  detail::TemporaryFile source_file(scratch.string() + ".gv"), messages(scratch.string() + ".err");
  write_text_file(source, source_file.path());
  std::unique_ptr<detail::TemporaryFile> svg = output.empty() ? nullptr : std::make_unique<detail::TemporaryFile>(output);
  std::vector<std::string> args = {"dot", "-Tsvg"};
  if (svg) args.insert(args.end(), {"-o", svg->path()});
  args.push_back(source_file.path());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, messages.path().c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::cout.flush();
  pid_t pid = 0;
  const int started = posix_spawnp(&pid, "dot", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (started == ENOENT)
    throw Error("--svg needs Graphviz's `dot` program, which is not installed (Debian: apt-get install graphviz); "
                "without --svg, xexp dot writes the Graphviz source");
  if (started != 0) throw Error(std::string("cannot run Graphviz's dot: ") + std::strerror(started));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error("Graphviz's dot could not render the drawing: " + first_line_of(messages.path()));
  if (svg) svg->commit();
}

inline void add_dot_command(CLI::App& app) {
  struct Args {
    std::string model, optimized, output;
    bool svg = false;
    bool types = true;
    tools::DotOptions options;
    LoadOptions load;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "dot", "Draw a model with Graphviz; given MODEL and OPTIMIZED, draw OPTIMIZED with the rule that made each node");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("optimized", args->optimized,
                  "The same model after `xexp optimize`: drawn instead of MODEL, the nodes the rules made marked");
  cmd->add_option("-o,--output", args->output, "Where to write the drawing (default: stdout)");
  cmd->add_flag("--svg", args->svg, "Render as SVG with Graphviz's dot program instead of writing its source");
  cmd->add_option("--max-values", args->options.max_constant_values,
                  "Show the values of constants up to this size in their consumer's box")
      ->capture_default_str();
  cmd->add_flag("!--no-functions", args->options.functions, "Do not draw local functions");
  cmd->add_flag("!--no-types", args->types, "Do not infer the type and shape of node outputs");
  add_load_options(cmd, args->load);
  cmd->callback([args] {
    if (!args->output.empty()) {
      check_not_overwriting(args->model, args->output);
      if (!args->optimized.empty()) check_not_overwriting(args->optimized, args->output);
    }
    ir::Model model = load_model(args->model, args->load);
    std::string title = std::filesystem::path(args->model).filename().string();
    ir::Model drawn;
    if (!args->optimized.empty()) {
      drawn = load_model(args->optimized, args->load);
      title = std::filesystem::path(args->optimized).filename().string() + " (from " + title + ")";
      args->options.before = &model;
    }
    ir::Model& shown = args->optimized.empty() ? model : drawn;
    if (!args->output.empty()) {
      check_not_overwriting(model, args->output);
      check_not_overwriting(drawn, args->output);
    }
    // As `xexp optimize` types a model: function bodies take the types their calls agree on.
    if (args->types && shown.functions.empty()) infer::infer_model_types(shown);
    else if (args->types) functions::type_function_bodies(shown);
    args->options.title = title;
    const std::string source = tools::to_dot(shown, args->options);
    if (args->svg) render_svg(source, args->output);
    else if (args->output.empty()) std::cout << source;
    else write_text_file(source, args->output);
  });
}

}  // namespace xexp::cli
