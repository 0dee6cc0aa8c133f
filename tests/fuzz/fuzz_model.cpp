// libFuzzer harness (issue 11): the bytes are a serialized ModelProto; the environment variable
// XEXP_FUZZ_ACTION picks what is done with the model once it is loaded (one program for all actions, so that
// CI builds one small program more). Any xexp::Error (or other std::exception, which the CLI reports as one
// error line too) is an accepted outcome; a crash, a sanitizer report, a leak or a hang is a bug.
//   load:     load, then save to a proto (the round trip every command does)
//   print:    infer types, then print (xexp print)
//   optimize: the default rules with constant folding (xexp optimize)
//   inline:   inline every local function, then save (xexp inline)
//   run:      the evaluator on small random inputs (xexp run --random)
// Built by -DXEXP_BUILD_FUZZERS=ON -DXEXP_SANITIZE=ON with clang; run by scripts/fuzz.sh. Its long mode
// mutates models by their structure (structured_mutator.hpp).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>
#include <string_view>

#include "xexp/functions/inliner.hpp"
#include "xexp/infer/model.hpp"
#include "xexp/onnx.hpp"
#include "xexp/tools/inputs.hpp"
#include "xexp/optimizer/optimize_model.hpp"
#include "xexp/tools/printer.hpp"
#include "xexp/tools/run.hpp"
#include "structured_mutator.hpp"

namespace {

std::string_view kAction;  // set once by LLVMFuzzerInitialize
// What expanding local functions may produce: the limit is what is tested, not how long a large expansion runs.
constexpr int64_t kMaxNodes = 100'000;

// Random inputs are capped: a model may declare inputs of any size, which is not what is being tested.
bool small_inputs(const xexp::ir::Graph& g) {
  for (xexp::ir::ValueId id : xexp::tools::fed_inputs(g)) {
    const xexp::ir::Value& v = g.value(id);
    if (!v.shape) return false;
    int64_t n = 1;
    for (const xexp::Dim& d : *v.shape) {
      const int64_t size = d.is_static() ? d.value() : 2;
      if (size < 0 || size > 4096 || (n *= std::max<int64_t>(size, 1)) > (1 << 16)) return false;
    }
  }
  return true;
}

void act(xexp::ir::Model& model) {
  if (kAction == "load") {
    (void)xexp::model_to_proto(model);
  } else if (kAction == "print") {
    xexp::infer::infer_model_types(model);
    (void)xexp::tools::pretty(model, {.max_init_values = 10, .indent = true, .functions = true, .types = true});
  } else if (kAction == "optimize") {
    std::ostringstream log;
    xexp::optimizer::OptimizeModelOptions options;
    options.log = &log;
    xexp::optimizer::optimize_model(model, options);
    (void)xexp::model_to_proto(model);
  } else if (kAction == "inline") {
    xexp::functions::InlineOptions options;
    options.max_nodes = kMaxNodes;
    xexp::functions::inline_functions(model, options);
    (void)xexp::model_to_proto(model);
  } else if (kAction == "run") {
    if (!small_inputs(*model.graph)) return;
    xexp::tools::InputOptions inputs;
    inputs.random = true;
    inputs.random_options.default_dim = 2;
    const xexp::ElementCap cap(int64_t{1} << 22);  // a model may ask for GBs of constants: not what is tested
    xexp::eval::RunOptions options;
    options.max_loop_iterations = 1000;  // the limit is what is tested, not how long a loop may run
    options.max_nodes = kMaxNodes;
    xexp::tools::run_model(model, xexp::tools::make_feeds(*model.graph, inputs), options);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* action = std::getenv("XEXP_FUZZ_ACTION");
  kAction = action ? action : "";
  for (std::string_view known : {"load", "print", "optimize", "inline", "run"})
    if (kAction == known) return 0;
  std::fprintf(stderr, "set XEXP_FUZZ_ACTION to load, print, optimize, inline or run\n");
  std::exit(2);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ::onnx::ModelProto proto;
  if (size > (std::size_t{1} << 30) || !proto.ParseFromArray(data, static_cast<int>(size)) || !proto.has_graph())
    return 0;
  try {
    xexp::ir::Model model = xexp::model_from_proto(std::move(proto));  // no directory: external data stays unread
    act(model);
  } catch (const std::exception&) {
  }
  return 0;
}
