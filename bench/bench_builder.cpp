// GraphBuilder::make_node throughput with inference on, in nodes per second (items_per_second), against
// two baselines measured in the same run on the same nodes:
//   x_protobuf  builder time / time to write the same NodeProtos by hand (GraphProto::add_node, set
//               op_type, name, inputs, outputs, attributes): what building the ModelProto directly costs.
//   x_ir        builder time / time to add the same values and nodes to an ir::Graph directly (ids
//               known, no names looked up, no checks, no inference).
// Graphs (symbolic dims "batch" and "seq" everywhere):
//   AddChain/N        y = Add(y, bias) N times, make_node with generated output names
//   MixedChain/N      N nodes cycling MatMul, Add, Reshape to heads, Transpose, Transpose, Reshape back
//   Decoder/L         L decoder layers built with the op shortcuts (g.op.MatMul(...)) inside module
//                     scopes: LayerNormalization, attention with 4 heads, MLP, residuals
#include <benchmark/benchmark.h>

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <ctime>
#include <string>
#include <vector>

#include "xexp/builder.hpp"

namespace {

using namespace xexp;

// Thread CPU time: the machine is shared, wall time would measure the neighbours.
double cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

constexpr int64_t kHidden = 256, kHeads = 4;
const Shape kActivation{Dim::symbolic("batch"), Dim::symbolic("seq"), Dim(kHidden)};

// ---- the graphs --------------------------------------------------------------------------------

void add_chain(GraphBuilder& g, int64_t n) {
  g.make_tensor_input("X", ElemType::Float, kActivation);
  std::string bias = g.make_initializer("bias", Tensor(ElemType::Float, {kHidden}));
  std::string y = "X";
  for (int64_t k = 0; k < n; ++k) y = g.make_node("Add", {y, bias});
  g.make_tensor_output(y);
}

void mixed_chain(GraphBuilder& g, int64_t n) {
  g.make_tensor_input("X", ElemType::Float, kActivation);
  std::string w = g.make_initializer("w", Tensor(ElemType::Float, {kHidden, kHidden}));
  std::string bias = g.make_initializer("bias", Tensor(ElemType::Float, {kHidden}));
  std::string heads = g.make_initializer("heads", Tensor::from<int64_t>({4}, {0, 0, kHeads, kHidden / kHeads}));
  std::string flat = g.make_initializer("flat", Tensor::from<int64_t>({3}, {0, 0, kHidden}));
  const Attrs perm{{"perm", {0, 2, 1, 3}}};
  std::string y = "X";
  for (int64_t k = 0; k < n; ++k) {
    switch (k % 6) {
      case 0: y = g.make_node("MatMul", {y, w}); break;
      case 1: y = g.make_node("Add", {y, bias}); break;
      case 2: y = g.make_node("Reshape", {y, heads}); break;
      case 3: y = g.make_node("Transpose", {y}, 1, perm); break;
      case 4: y = g.make_node("Transpose", {y}, 1, perm); break;
      case 5: y = g.make_node("Reshape", {y, flat}); break;
    }
  }
  g.make_tensor_output(y);
}

// A decoder-like model as an exporter would write it with the op shortcuts. Weights share one
// storage per shape: the benchmark measures nodes, not weight initialization.
class Decoder {
 public:
  explicit Decoder(GraphBuilder& g) : g_(g) {}

  void build(int64_t layers) {
    g_.make_tensor_input("x", ElemType::Float, kActivation);
    g_.make_tensor_input("mask", ElemType::Float, Shape{Dim::symbolic("batch"), 1, Dim::symbolic("seq"), Dim::symbolic("seq")});
    std::string x = "x";
    for (int64_t k = 0; k < layers; ++k) x = layer("layers." + std::to_string(k), x);
    g_.make_tensor_output(x);
  }

 private:
  std::string layer(const std::string& p, const std::string& x) {
    auto scope = g_.module(p, "DecoderLayer");
    std::string h = layer_norm(p + ".ln1", x);
    std::string q = split_heads(linear(p + ".q", h)), k = split_heads(linear(p + ".k", h)), v = split_heads(linear(p + ".v", h));
    std::string scores = g_.op.MatMul(q, g_.op.Transpose(k, {{"perm", {0, 1, 3, 2}}}));
    std::string masked = g_.op.Add(g_.op.Mul(scores, Tensor::scalar<float>(0.125f)), "mask");
    std::string context = g_.op.MatMul(g_.op.Softmax(masked, {{"axis", -1}}), v);
    std::string merged = g_.op.Reshape(g_.op.Transpose(context, {{"perm", {0, 2, 1, 3}}}), {0, 0, kHidden});
    std::string residual = g_.op.Add(x, linear(p + ".o", merged));
    std::string up = g_.op.Relu(linear(p + ".fc1", layer_norm(p + ".ln2", residual)));
    return g_.op.Add(residual, linear(p + ".fc2", up));
  }
  std::string split_heads(const std::string& x) {
    return g_.op.Transpose(g_.op.Reshape(x, {0, 0, kHeads, kHidden / kHeads}), {{"perm", {0, 2, 1, 3}}});
  }
  std::string linear(const std::string& p, const std::string& x) {
    auto scope = g_.module(p, "Linear");
    std::string w = g_.make_initializer(p + ".weight", matrix_);
    std::string b = g_.make_initializer(p + ".bias", vector_);
    return g_.op.Add(g_.op.MatMul(x, w), b);
  }
  std::string layer_norm(const std::string& p, const std::string& x) {
    auto scope = g_.module(p, "LayerNorm");
    return g_.op.LayerNormalization(x, g_.make_initializer(p + ".weight", vector_), g_.make_initializer(p + ".bias", vector_),
                                    {{"axis", -1}, {"epsilon", 1e-5f}});
  }

  GraphBuilder& g_;
  Tensor matrix_{ElemType::Float, {kHidden, kHidden}};
  Tensor vector_{ElemType::Float, {kHidden}};
};

void decoder(GraphBuilder& g, int64_t layers) { Decoder(g).build(layers); }

// ---- the baselines -----------------------------------------------------------------------------

// The nodes of a built graph, as plain data both baselines consume.
struct Recorded {
  std::vector<std::string> value_names;  // every value, in id order
  struct NodeSpec {
    std::string op, domain, name;
    std::vector<ir::ValueId> inputs, outputs;
    std::vector<ir::Attribute> attributes;
  };
  std::vector<NodeSpec> nodes;
};

Recorded record(const ir::Graph& g) {
  Recorded r;
  for (ir::ValueId v = 0; v < g.value_capacity(); ++v) r.value_names.push_back(g.value(v).name);
  for (ir::NodeId id : g.nodes()) {
    const ir::Node& n = g.node(id);
    r.nodes.push_back({n.op_type.str(), n.domain.str(), n.name, n.inputs, n.outputs, n.attributes});
  }
  return r;
}

void write_attribute(const ir::Attribute& a, ::onnx::AttributeProto& p) {
  p.set_name(a.name.str());
  p.set_type(static_cast<::onnx::AttributeProto::AttributeType>(a.type));
  switch (a.type) {
    case ir::AttrType::Int: p.set_i(a.i); break;
    case ir::AttrType::Float: p.set_f(a.f); break;
    case ir::AttrType::String: p.set_s(a.s); break;
    case ir::AttrType::Ints:
      for (int64_t v : a.ints) p.add_ints(v);
      break;
    default: break;  // the benchmarked graphs use no other kind
  }
}

// NodeProtos written by hand, names given as strings.
void build_protobuf(const Recorded& r) {
  ::onnx::GraphProto g;
  for (const Recorded::NodeSpec& s : r.nodes) {
    ::onnx::NodeProto* n = g.add_node();
    n->set_op_type(s.op);
    if (!s.domain.empty()) n->set_domain(s.domain);
    n->set_name(s.name);
    for (ir::ValueId v : s.inputs) n->add_input(v == ir::kNone ? std::string() : r.value_names[v]);
    for (ir::ValueId v : s.outputs) n->add_output(v == ir::kNone ? std::string() : r.value_names[v]);
    for (const ir::Attribute& a : s.attributes) write_attribute(a, *n->add_attribute());
  }
  benchmark::DoNotOptimize(g);
}

// The same values and nodes added to an ir::Graph with their ids already known.
void build_ir(const Recorded& r) {
  ir::Graph g;
  for (const std::string& name : r.value_names) g.add_value(name);
  for (const Recorded::NodeSpec& s : r.nodes)
    g.add_node(Symbol(s.op), s.inputs, s.outputs, s.attributes, s.name, Symbol(s.domain));
  benchmark::DoNotOptimize(g);
}

// Best of a few runs, in seconds.
template <class F>
double best_time(F&& f) {
  double best = 1e30;
  for (int k = 0; k < 5; ++k) {
    const double t0 = cpu_now();
    f();
    best = std::min(best, cpu_now() - t0);
  }
  return best;
}

using Build = void (*)(GraphBuilder&, int64_t);

void BM_Builder(benchmark::State& state, Build build) {
  const int64_t n = state.range(0);
  std::size_t nodes = 0;
  double total = 0;
  for (auto _ : state) {
    const double t0 = cpu_now();
    {
      GraphBuilder g(18);
      build(g, n);
      nodes = g.graph().node_count();
    }
    total += cpu_now() - t0;
  }
  GraphBuilder g(18);
  build(g, n);
  const Recorded r = record(g.graph());
  const double per_build = total / static_cast<double>(state.iterations());
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(nodes));
  state.counters["nodes"] = static_cast<double>(nodes);
  state.counters["ns_per_node"] = 1e9 * per_build / static_cast<double>(nodes);
  state.counters["x_protobuf"] = per_build / best_time([&] { build_protobuf(r); });
  state.counters["x_ir"] = per_build / best_time([&] { build_ir(r); });
}

// The protobuf baseline alone, for its own nodes per second.
void BM_Protobuf(benchmark::State& state, Build build) {
  GraphBuilder g(18);
  build(g, state.range(0));
  const Recorded r = record(g.graph());
  for (auto _ : state) build_protobuf(r);
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(r.nodes.size()));
}

}  // namespace

BENCHMARK_CAPTURE(BM_Builder, AddChain, add_chain)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Builder, MixedChain, mixed_chain)->Arg(10002)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Builder, Decoder, decoder)->Arg(32)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Protobuf, AddChain, add_chain)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Protobuf, MixedChain, mixed_chain)->Arg(10002)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Protobuf, Decoder, decoder)->Arg(32)->Unit(benchmark::kMillisecond);
