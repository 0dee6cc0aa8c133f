// Inlining against load+save of its result, in the same run. The model: L decoder-like layers, each
// one call of the same local function (15 nodes: attention with a softmax, output projection,
// residual, ReLU MLP, residual), weights passed by the caller. Inline carries `x_load_save` (its time
// divided by loading and saving the inlined model) and `ns_per_node` (per node produced), which
// should stay flat from 32 to 128 layers.
#include <benchmark/benchmark.h>

#include <ctime>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>

#include "xexp/functions/inliner.hpp"
#include "xexp/onnx.hpp"

namespace {

using namespace xexp;
using namespace xexp::ir;

constexpr int64_t kHidden = 64;

// Thread CPU time: the machine is shared, wall time would measure the neighbours.
double cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

ValueId add(Graph& g, const char* op, std::vector<ValueId> inputs, const std::string& output,
            std::vector<Attribute> attributes = {}) {
  ValueId out = g.add_value(output);
  g.add_node(op, std::move(inputs), {out}, std::move(attributes), output);
  return out;
}

void add_layer_function(Model& m) {
  Function& f = m.functions.emplace_back();
  f.name = "Layer";
  f.domain = "local";
  f.opsets = {{"", 18, {}}};
  Graph& g = *f.body;
  ValueId x = g.add_input("x");
  std::map<std::string, ValueId> w;
  for (const char* name : {"wq", "wk", "wv", "wo", "w1", "w2"}) w[name] = g.add_input(name);
  ValueId q = add(g, "MatMul", {x, w["wq"]}, "q");
  ValueId k = add(g, "MatMul", {x, w["wk"]}, "k");
  ValueId v = add(g, "MatMul", {x, w["wv"]}, "v");
  ValueId kt = add(g, "Transpose", {k}, "kt", {Attribute::make_ints("perm", {1, 0})});
  ValueId scores = add(g, "MatMul", {q, kt}, "scores");
  ValueId scale = g.add_value("scale");
  g.add_node("Constant", {}, {scale}, {Attribute::make_tensor("value", Tensor::scalar<float>(0.125f))}, "scale");
  ValueId scaled = add(g, "Mul", {scores, scale}, "scaled");
  ValueId probs = add(g, "Softmax", {scaled}, "probs", {Attribute::make_int("axis", -1)});
  ValueId context = add(g, "MatMul", {probs, v}, "context");
  ValueId attention = add(g, "MatMul", {context, w["wo"]}, "attention");
  ValueId residual = add(g, "Add", {attention, x}, "residual");
  ValueId hidden = add(g, "MatMul", {residual, w["w1"]}, "hidden");
  ValueId relu = add(g, "Relu", {hidden}, "relu");
  ValueId mlp = add(g, "MatMul", {relu, w["w2"]}, "mlp");
  g.add_output(add(g, "Add", {mlp, residual}, "y"));
}

Model decoder_with_calls(int layers) {
  Model m;
  m.opsets = {{"", 18, {}}, {"local", 1, {}}};
  add_layer_function(m);
  Graph& g = *m.graph;
  ValueId x = g.add_input("X", ElemType::Float, Shape{16, kHidden});
  const Tensor weight(ElemType::Float, {kHidden, kHidden});  // shared bytes: building stays cheap
  for (int l = 0; l < layers; ++l) {
    const std::string p = "layer" + std::to_string(l) + ".";
    std::vector<ValueId> inputs = {x};
    for (const char* name : {"wq", "wk", "wv", "wo", "w1", "w2"}) inputs.push_back(g.add_initializer(p + name, weight));
    ValueId y = g.add_value(p + "out");
    g.add_node("Layer", std::move(inputs), {y}, {}, p + "call", "local");
    x = y;
  }
  g.value(x).elem = ElemType::Float;
  g.add_output(x);
  return m;
}

// Last measured load+save time per layer count, for the ratio.
std::map<int, double>& load_save_seconds() {
  static std::map<int, double> seconds;
  return seconds;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("xexp_bench_inline_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

void BM_LoadSaveInlined(benchmark::State& state) {
  const int layers = static_cast<int>(state.range(0));
  const std::string in = temp_path(std::to_string(layers) + ".onnx"), out = temp_path("out.onnx");
  {
    Model m = decoder_with_calls(layers);
    functions::inline_functions(m);
    save_model(m, in);
  }
  double total = 0;
  for (auto _ : state) {
    const double start = cpu_now();
    Model m = load_model(in);
    save_model(m, out);
    total += cpu_now() - start;
  }
  load_save_seconds()[layers] = total / static_cast<double>(state.iterations());
  std::filesystem::remove(in);
  std::filesystem::remove(out);
}

void BM_Inline(benchmark::State& state) {
  const int layers = static_cast<int>(state.range(0));
  double total = 0;
  std::size_t nodes = 0;
  for (auto _ : state) {
    Model m = decoder_with_calls(layers);  // not timed: inlining consumes the model
    const double start = cpu_now();
    functions::inline_functions(m);
    total += cpu_now() - start;
    nodes = m.graph->node_count();
    benchmark::DoNotOptimize(m.graph.get());
  }
  const double per_run = total / static_cast<double>(state.iterations());
  state.counters["inline_ms"] = per_run * 1e3;
  state.counters["ns_per_node"] = per_run * 1e9 / static_cast<double>(nodes);
  if (auto it = load_save_seconds().find(layers); it != load_save_seconds().end())
    state.counters["x_load_save"] = per_run / it->second;
}

}  // namespace

BENCHMARK(BM_LoadSaveInlined)->Arg(32)->Arg(128)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Inline)->Arg(32)->Arg(128)->Unit(benchmark::kMillisecond);
