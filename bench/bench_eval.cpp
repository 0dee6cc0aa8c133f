// The reference evaluator's latency next to ONNX Runtime 1.30's, on the same model and inputs, in the
// same run. For every model of XEXP_SHARED_DIR/models, Eval/<model> times eval::Evaluator::run (thread
// CPU time per run, counter `xexp_ms`); before its loop it asks tests/ort/run_ort.js (latency mode, one
// intra-op thread) for ONNX Runtime's CPU time per run of the same model on the same inputs, with all its
// graph optimizations (`ort_ms`) and with none (`ort_noopt_ms`). The counters `x_ort` and `x_ort_noopt`
// are xexp's time over ORT's: the evaluator is a reference implementation, the ratio says how far it is
// from a production runtime.
#include <benchmark/benchmark.h>

#include <ctime>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>

#include "support/ort.hpp"
#include "xexp/onnx.hpp"
#include "xexp/tools/run.hpp"

namespace {

using namespace xexp;

// Thread CPU time: the machine is shared, wall time would measure the neighbours.
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// ONNX Runtime's CPU milliseconds per run (one intra-op thread) at optimization `level`.
double ort_cpu_ms(const std::string& model, const tools::Feeds& feeds, const std::string& level, int repeat) {
  testing::TempDir dir;
  const std::string inputs = testing::write_ort_feeds(dir.path(), feeds);
  const testing::CommandResult r = testing::run_command(testing::ort_command(
      "latency " + testing::shell_quote(model) + " " + testing::shell_quote(inputs) + " --repeat " + std::to_string(repeat),
      {.optimization_level = level, .threads = 1}));
  if (r.exit_code != 0) throw Error("run_ort.js latency failed on " + model + ": " + r.err);
  std::istringstream out(r.out);
  std::map<std::string, double> values;
  for (std::string key; out >> key;) out >> values[key];
  if (!values.count("cpu_ms")) throw Error("run_ort.js latency printed no cpu_ms: " + r.out);
  return values["cpu_ms"];
}

void BM_Eval(benchmark::State& state, const std::string& path) {
  const ir::Model model = load_model(path);
  const tools::Feeds feeds = tools::random_feeds(*model.graph, {.seed = 0, .default_dim = 2});
  const double ort_ms = ort_cpu_ms(path, feeds, "all", 50);
  const double ort_noopt_ms = ort_cpu_ms(path, feeds, "disabled", 50);
  const eval::Evaluator evaluator(model);
  double seconds = 0;
  for (auto _ : state) {
    const double start = thread_cpu_seconds();
    std::vector<Tensor> outputs = evaluator.run(feeds);
    benchmark::DoNotOptimize(outputs);
    seconds += thread_cpu_seconds() - start;
  }
  const double xexp_ms = 1e3 * seconds / static_cast<double>(state.iterations());
  state.counters["nodes"] = static_cast<double>(model.graph->node_count());
  state.counters["xexp_ms"] = xexp_ms;
  state.counters["ort_ms"] = ort_ms;
  state.counters["ort_noopt_ms"] = ort_noopt_ms;
  state.counters["x_ort"] = xexp_ms / ort_ms;
  state.counters["x_ort_noopt"] = xexp_ms / ort_noopt_ms;
}

const bool registered = [] {
  const std::filesystem::path dir = std::filesystem::path(XEXP_SHARED_DIR) / "models";
  std::map<std::string, std::string> models;  // sorted: the same order on every machine
  if (std::filesystem::exists(dir))
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.path().extension() == ".onnx") models[e.path().stem().string()] = e.path().string();
  for (const auto& [name, path] : models) {
    const std::string file = path;
    benchmark::RegisterBenchmark(("Eval/" + name).c_str(), [file](benchmark::State& s) { BM_Eval(s, file); })
        ->Unit(benchmark::kMillisecond);
  }
  return true;
}();

}  // namespace
