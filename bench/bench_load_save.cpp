// Load and save against protobuf's own parse and serialize of the same bytes, in the same run.
// For every model: ProtobufParse, Load (parse + model_from_proto), ProtobufSerialize, Save
// (model_to_proto + serialize), SaveMoved (model_to_proto(Model&&) + serialize). Load and Save
// carry a counter `x_protobuf`: their time divided by protobuf's alone, measured in the same
// process just before (1.0 = free on top of protobuf).
//
// Models: /work/shared/models/*.onnx and a generated 32-layer decoder-like graph (about 30 nodes and
// six 256x256 float weights per layer, 48 MB).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "xexp/onnx.hpp"

namespace {

// Thread CPU time: the machine is shared, wall time would measure the neighbours.
struct Clock {
  static double now() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  }
};

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// One decoder layer: LayerNorm, attention with 4 heads of 64, output projection, residual,
// LayerNorm, a 256->256->256 ReLU MLP, residual.
class DecoderBuilder {
 public:
  explicit DecoderBuilder(xexp::ir::Graph& g) : g_(g) {}

  xexp::ir::ValueId layer(int k, xexp::ir::ValueId x, xexp::ir::ValueId mask) {
    const std::string p = "layer" + std::to_string(k) + ".";
    auto h = layer_norm(p + "ln1", x);
    auto q = heads(p + "q", h), kk = heads(p + "k", h), v = heads(p + "v", h);
    auto kt = node("Transpose", p + "kt", {kk}, {perm({0, 1, 3, 2})});
    auto scores = node("MatMul", p + "scores", {q, kt});
    auto scaled = node("Mul", p + "scale", {scores, constant(p + "scale_value", {}, 0.125f)});
    auto masked = node("Add", p + "mask", {scaled, mask});
    auto probs = node("Softmax", p + "softmax", {masked}, {xexp::ir::Attribute::make_int(xexp::Symbol("axis"), -1)});
    auto context = node("MatMul", p + "context", {probs, v});
    auto merged = node("Transpose", p + "merge", {context}, {perm({0, 2, 1, 3})});
    auto flat = node("Reshape", p + "flatten", {merged, shape_constant(p + "flat_shape", {1, -1, 256})});
    auto attn = linear(p + "o", flat);
    auto residual = node("Add", p + "residual1", {x, attn});
    auto h2 = layer_norm(p + "ln2", residual);
    auto up = node("Relu", p + "relu", {linear(p + "fc1", h2)});
    return node("Add", p + "residual2", {residual, linear(p + "fc2", up)});
  }

  xexp::ir::ValueId node(const char* op, const std::string& name, std::vector<xexp::ir::ValueId> inputs,
                         std::vector<xexp::ir::Attribute> attributes = {}) {
    auto out = g_.add_value(name + ".out");
    g_.add_node(xexp::Symbol(op), std::move(inputs), {out}, std::move(attributes), name);
    return out;
  }

 private:
  xexp::ir::ValueId constant(const std::string& name, std::vector<int64_t> dims, float value) {
    xexp::Tensor t(xexp::ElemType::Float, std::move(dims));
    for (float& v : t.mutable_data<float>()) v = value;
    return g_.add_initializer(name, std::move(t));
  }
  xexp::ir::ValueId weights(const std::string& name, std::vector<int64_t> dims) {
    xexp::Tensor t(xexp::ElemType::Float, std::move(dims));
    std::uniform_real_distribution<float> dist(-0.05f, 0.05f);
    for (float& v : t.mutable_data<float>()) v = dist(rng_);
    return g_.add_initializer(name, std::move(t));
  }
  xexp::ir::ValueId shape_constant(const std::string& name, std::vector<int64_t> values) {
    const auto n = static_cast<int64_t>(values.size());
    return g_.add_initializer(name, xexp::Tensor::from<int64_t>({n}, values));
  }
  static xexp::ir::Attribute perm(std::vector<int64_t> p) {
    return xexp::ir::Attribute::make_ints(xexp::Symbol("perm"), std::move(p));
  }
  xexp::ir::ValueId linear(const std::string& name, xexp::ir::ValueId x) {
    auto mm = node("MatMul", name + ".matmul", {x, weights(name + ".weight", {256, 256})});
    return node("Add", name + ".bias", {mm, weights(name + ".bias_value", {256})});
  }
  xexp::ir::ValueId heads(const std::string& name, xexp::ir::ValueId x) {
    auto split = node("Reshape", name + ".split", {linear(name, x), shape_constant(name + ".shape", {1, -1, 4, 64})});
    return node("Transpose", name + ".heads", {split}, {perm({0, 2, 1, 3})});
  }
  xexp::ir::ValueId layer_norm(const std::string& name, xexp::ir::ValueId x) {
    return node("LayerNormalization", name, {x, constant(name + ".gamma", {256}, 1), constant(name + ".beta", {256}, 0)},
                {xexp::ir::Attribute::make_int(xexp::Symbol("axis"), -1)});
  }

  xexp::ir::Graph& g_;
  std::mt19937 rng_{7};
};

std::string decoder_bytes(int layers) {
  xexp::ir::Model m;
  m.opsets.push_back({"", 18, {}, 0});
  m.producer_name = "bench_load_save";
  auto& g = *m.graph;
  auto x = g.add_input("x", xexp::ElemType::Float, xexp::Shape{1, xexp::Dim::symbolic("seq"), 256});
  auto mask = g.add_input("mask", xexp::ElemType::Float, xexp::Shape{1, 1, xexp::Dim::symbolic("seq"), xexp::Dim::symbolic("seq")});
  DecoderBuilder b(g);
  for (int k = 0; k < layers; ++k) x = b.layer(k, x, mask);
  g.add_output(x);
  g.value(x).elem = xexp::ElemType::Float;
  return xexp::model_to_proto(std::move(m)).SerializeAsString();
}

// The models, as bytes, by name.
const std::map<std::string, std::string>& models() {
  static const std::map<std::string, std::string> all = [] {
    std::map<std::string, std::string> out;
    const std::filesystem::path dir = std::filesystem::path(XEXP_SHARED_DIR) / "models";
    if (std::filesystem::exists(dir))
      for (const auto& e : std::filesystem::directory_iterator(dir))
        if (e.path().extension() == ".onnx") out[e.path().stem().string()] = read_bytes(e.path());
    out["decoder_L32"] = decoder_bytes(32);
    return out;
  }();
  return all;
}

::onnx::ModelProto parse(const std::string& bytes) {
  ::onnx::ModelProto p;
  if (!p.ParseFromString(bytes)) throw xexp::Error("cannot parse");
  return p;
}

// Best of a few runs of `f`, in seconds: the protobuf baseline of the ratio counters.
template <class F>
double best_seconds(F&& f) {
  double best = 1e30;
  for (int k = 0; k < 5; ++k) {
    auto t0 = Clock::now();
    f();
    best = std::min(best, (Clock::now() - t0));
  }
  return best;
}

void set_common_counters(benchmark::State& state, const std::string& bytes, std::size_t nodes) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes.size()));
  state.counters["nodes"] = static_cast<double>(nodes);
}

void BM_ProtobufParse(benchmark::State& state, const std::string& bytes) {
  for (auto _ : state) {
    ::onnx::ModelProto p;
    benchmark::DoNotOptimize(p.ParseFromString(bytes));
  }
  set_common_counters(state, bytes, static_cast<std::size_t>(parse(bytes).graph().node_size()));
}

void BM_Load(benchmark::State& state, const std::string& bytes) {
  const double baseline = best_seconds([&] { benchmark::DoNotOptimize(parse(bytes)); });
  double total = 0;
  std::size_t nodes = 0;
  for (auto _ : state) {
    auto t0 = Clock::now();
    xexp::ir::Model m = xexp::model_from_proto(parse(bytes));
    total += (Clock::now() - t0);
    nodes = m.graph->node_count();
    state.PauseTiming();  // freeing the model is not part of loading it
    m = xexp::ir::Model();
    state.ResumeTiming();
  }
  set_common_counters(state, bytes, nodes);
  state.counters["x_protobuf"] = total / static_cast<double>(state.iterations()) / baseline;
}

void BM_ProtobufSerialize(benchmark::State& state, const std::string& bytes) {
  const ::onnx::ModelProto p = parse(bytes);
  for (auto _ : state) benchmark::DoNotOptimize(p.SerializeAsString());
  set_common_counters(state, bytes, static_cast<std::size_t>(p.graph().node_size()));
}

void BM_Save(benchmark::State& state, const std::string& bytes) {
  const ::onnx::ModelProto p = parse(bytes);
  const double baseline = best_seconds([&] { benchmark::DoNotOptimize(p.SerializeAsString()); });
  const xexp::ir::Model m = xexp::model_from_proto(parse(bytes));
  double total = 0;
  for (auto _ : state) {
    auto t0 = Clock::now();
    std::string out = xexp::model_to_proto(m).SerializeAsString();
    total += (Clock::now() - t0);
    benchmark::DoNotOptimize(out);
  }
  set_common_counters(state, bytes, m.graph->node_count());
  state.counters["x_protobuf"] = total / static_cast<double>(state.iterations()) / baseline;
}

// model_to_proto(Model&&): the weights move back into the proto instead of being copied.
void BM_SaveMoved(benchmark::State& state, const std::string& bytes) {
  const ::onnx::ModelProto p = parse(bytes);
  const double baseline = best_seconds([&] { benchmark::DoNotOptimize(p.SerializeAsString()); });
  double total = 0;
  std::size_t nodes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    xexp::ir::Model m = xexp::model_from_proto(parse(bytes));
    nodes = m.graph->node_count();
    state.ResumeTiming();
    auto t0 = Clock::now();
    std::string out = xexp::model_to_proto(std::move(m)).SerializeAsString();
    total += (Clock::now() - t0);
    benchmark::DoNotOptimize(out);
  }
  set_common_counters(state, bytes, nodes);
  state.counters["x_protobuf"] = total / static_cast<double>(state.iterations()) / baseline;
}

const bool registered = [] {
  for (const auto& [name, bytes] : models()) {
    const std::string* b = &bytes;
    benchmark::RegisterBenchmark(("ProtobufParse/" + name).c_str(), [b](benchmark::State& s) { BM_ProtobufParse(s, *b); })
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("Load/" + name).c_str(), [b](benchmark::State& s) { BM_Load(s, *b); })
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("ProtobufSerialize/" + name).c_str(), [b](benchmark::State& s) { BM_ProtobufSerialize(s, *b); })
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("Save/" + name).c_str(), [b](benchmark::State& s) { BM_Save(s, *b); })
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("SaveMoved/" + name).c_str(), [b](benchmark::State& s) { BM_SaveMoved(s, *b); })
        ->Unit(benchmark::kMicrosecond);
  }
  return true;
}();

}  // namespace
