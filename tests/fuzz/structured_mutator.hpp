#pragma once
// A structure-aware mutator for fuzz_model (issue 45): it parses the input as a ModelProto and changes what
// a model says rather than its bytes: attributes, dims, element types, tensor values, wiring, op types,
// opset imports, and it grows deep or wide graphs of local functions. Its values are the shapes of trouble
// the hostile corpus holds (../shared/corpus/hostile): the ends of the integer ranges, -1 divisors, empty
// and huge dims, shifts past the width, inf and NaN floats, chains thousands of calls deep, functions
// calling the next one twice. scripts/fuzz.sh --long turns it on (XEXP_FUZZ_STRUCTURED=1); otherwise, and
// for inputs that do not parse, libFuzzer's byte mutations run as before (CI's short run is unchanged).
#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace xexp::fuzz {

class StructuredMutator {
 public:
  explicit StructuredMutator(unsigned seed) : rng_(seed) {}

  // Mutates `m` once; false when the chosen mutation found nothing to change.
  bool mutate(::onnx::ModelProto& m) {
    switch (pick(12)) {
      case 0: return attribute_int(m);
      case 1: return attribute_int(m);
      case 2: return tensor_value(m);
      case 3: return tensor_value(m);
      case 4: return dims(m);
      case 5: return elem_type(m);
      case 6: return rewire(m);
      case 7: return op_type(m);
      case 8: return opset(m);
      case 9: return trouble_node(m);
      case 10: return deep_chain(m);
      default: return wide_functions(m);
    }
  }

 private:
  std::size_t pick(std::size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_); }
  template <class T>
  const T& choose(const std::vector<T>& v) { return v[pick(v.size())]; }

  int64_t extreme_int() {
    static const std::vector<int64_t> values = {0, 1, -1, 2, -2, 7, 63, 64, 65, 70, 255, 256,
                                                int64_t{1} << 16, int64_t{1} << 24, int64_t{1} << 31, (int64_t{1} << 31) - 1,
                                                -(int64_t{1} << 31), int64_t{1} << 32, int64_t{1} << 40, int64_t{1} << 62,
                                                std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(),
                                                std::numeric_limits<int64_t>::min() + 1};
    return choose(values);
  }
  double extreme_float() {
    static const std::vector<double> values = {0.0, -0.0, 1.0, -1.0, 0.5, 1e30, -1e30, 1e300,
                                               std::numeric_limits<double>::infinity(),
                                               -std::numeric_limits<double>::infinity(),
                                               std::numeric_limits<double>::quiet_NaN(), 9.3e18, -9.3e18, 2147483648.0};
    return choose(values);
  }

  // Every graph of the model: the main graph, function bodies are handled apart, and subgraphs.
  static void graphs_of(::onnx::GraphProto* g, std::vector<::onnx::GraphProto*>& out) {
    std::vector<::onnx::GraphProto*> pending{g};
    while (!pending.empty() && out.size() < 4096) {
      ::onnx::GraphProto* graph = pending.back();
      pending.pop_back();
      out.push_back(graph);
      for (auto& n : *graph->mutable_node())
        for (auto& a : *n.mutable_attribute()) {
          if (a.has_g()) pending.push_back(a.mutable_g());
          for (auto& sub : *a.mutable_graphs()) pending.push_back(&sub);
        }
    }
  }
  std::vector<::onnx::NodeProto*> nodes_of(::onnx::ModelProto& m) {
    std::vector<::onnx::GraphProto*> graphs;
    graphs_of(m.mutable_graph(), graphs);
    std::vector<::onnx::NodeProto*> out;
    for (::onnx::GraphProto* g : graphs)
      for (auto& n : *g->mutable_node()) out.push_back(&n);
    for (auto& f : *m.mutable_functions())
      for (auto& n : *f.mutable_node()) out.push_back(&n);
    return out;
  }
  std::vector<::onnx::TensorProto*> tensors_of(::onnx::ModelProto& m) {
    std::vector<::onnx::GraphProto*> graphs;
    graphs_of(m.mutable_graph(), graphs);
    std::vector<::onnx::TensorProto*> out;
    for (::onnx::GraphProto* g : graphs)
      for (auto& t : *g->mutable_initializer()) out.push_back(&t);
    for (::onnx::NodeProto* n : nodes_of(m))
      for (auto& a : *n->mutable_attribute())
        if (a.has_t()) out.push_back(a.mutable_t());
    return out;
  }
  std::vector<::onnx::ValueInfoProto*> value_infos_of(::onnx::ModelProto& m) {
    std::vector<::onnx::GraphProto*> graphs;
    graphs_of(m.mutable_graph(), graphs);
    std::vector<::onnx::ValueInfoProto*> out;
    for (::onnx::GraphProto* g : graphs) {
      for (auto& v : *g->mutable_input()) out.push_back(&v);
      for (auto& v : *g->mutable_output()) out.push_back(&v);
      for (auto& v : *g->mutable_value_info()) out.push_back(&v);
    }
    return out;
  }

  // An int or ints attribute of a node set to an extreme (axis, num_outputs, to, perm, pads, ...).
  bool attribute_int(::onnx::ModelProto& m) {
    auto nodes = nodes_of(m);
    if (nodes.empty()) return false;
    ::onnx::NodeProto& n = *choose(nodes);
    static const std::vector<std::string> names = {"axis", "axes", "num_outputs", "to", "perm", "pads", "repeats",
                                                   "keepdims", "exclusive", "reverse", "k", "split", "group",
                                                   "kernel_shape", "strides", "dilations", "blocksize", "batch_dims"};
    ::onnx::AttributeProto* a = nullptr;
    if (n.attribute_size() > 0 && pick(3) > 0) a = n.mutable_attribute(static_cast<int>(pick(n.attribute_size())));
    else {
      a = n.add_attribute();
      a->set_name(choose(names));
      a->set_type(pick(2) ? ::onnx::AttributeProto::INT : ::onnx::AttributeProto::INTS);
    }
    if (a->type() == ::onnx::AttributeProto::INTS || a->ints_size() > 0) {
      if (a->ints_size() == 0 || pick(4) == 0) a->add_ints(extreme_int());
      else a->set_ints(static_cast<int>(pick(a->ints_size())), extreme_int());
    } else if (a->type() == ::onnx::AttributeProto::FLOAT) {
      a->set_f(static_cast<float>(extreme_float()));
    } else {
      a->set_type(::onnx::AttributeProto::INT);
      a->set_i(extreme_int());
    }
    return true;
  }

  // One element of an initializer or Constant tensor set to an extreme of its type.
  bool tensor_value(::onnx::ModelProto& m) {
    auto tensors = tensors_of(m);
    if (tensors.empty()) return false;
    ::onnx::TensorProto& t = *choose(tensors);
    std::string* raw = t.mutable_raw_data();
    auto put = [&](const auto value) {
      const std::size_t s = sizeof(value);
      if (raw->size() < s) return false;
      std::memcpy(raw->data() + pick(raw->size() / s) * s, &value, s);
      return true;
    };
    switch (t.data_type()) {
      case ::onnx::TensorProto::INT64:
        if (t.int64_data_size() > 0) return t.set_int64_data(static_cast<int>(pick(t.int64_data_size())), extreme_int()), true;
        return put(extreme_int());
      case ::onnx::TensorProto::INT32:
        if (t.int32_data_size() > 0)
          return t.set_int32_data(static_cast<int>(pick(t.int32_data_size())), static_cast<int32_t>(extreme_int())), true;
        return put(static_cast<int32_t>(extreme_int()));
      case ::onnx::TensorProto::UINT8: return put(static_cast<uint8_t>(extreme_int()));
      case ::onnx::TensorProto::UINT64: return put(static_cast<uint64_t>(extreme_int()));
      case ::onnx::TensorProto::DOUBLE: return put(extreme_float());
      case ::onnx::TensorProto::FLOAT:
        if (t.float_data_size() > 0)
          return t.set_float_data(static_cast<int>(pick(t.float_data_size())), static_cast<float>(extreme_float())), true;
        return put(static_cast<float>(extreme_float()));
      default: return false;
    }
  }

  // A declared dim (graph inputs and outputs, value_info) set to 0, -1, 1, huge, or a symbol; or an
  // empty initializer.
  bool dims(::onnx::ModelProto& m) {
    if (pick(4) == 0) {
      auto tensors = tensors_of(m);
      if (tensors.empty()) return false;
      ::onnx::TensorProto& t = *choose(tensors);
      t.clear_dims();
      t.add_dims(0);
      t.clear_raw_data();
      t.clear_float_data();
      t.clear_int64_data();
      t.clear_int32_data();
      t.set_raw_data("");
      return true;
    }
    auto infos = value_infos_of(m);
    if (infos.empty()) return false;
    ::onnx::TensorShapeProto* shape = choose(infos)->mutable_type()->mutable_tensor_type()->mutable_shape();
    if (shape->dim_size() == 0 || pick(5) == 0) shape->add_dim();
    auto* d = shape->mutable_dim(static_cast<int>(pick(shape->dim_size())));
    if (pick(5) == 0) d->set_dim_param(pick(2) ? "N" : "");
    else d->set_dim_value(choose(std::vector<int64_t>{0, 1, -1, 2, 3, 4096, int64_t{1} << 31, int64_t{1} << 40,
                                                       std::numeric_limits<int64_t>::max()}));
    return true;
  }

  int32_t some_elem_type() {
    static const std::vector<int32_t> types = {1, 2, 3, 5, 6, 7, 9, 10, 11, 12, 13, 16, 8, 0, 40};
    return choose(types);
  }
  // The element type of a declared value, of a tensor (its data left as it was), or Cast's `to`.
  bool elem_type(::onnx::ModelProto& m) {
    switch (pick(3)) {
      case 0: {
        auto infos = value_infos_of(m);
        if (infos.empty()) return false;
        choose(infos)->mutable_type()->mutable_tensor_type()->set_elem_type(some_elem_type());
        return true;
      }
      case 1: {
        auto tensors = tensors_of(m);
        if (tensors.empty()) return false;
        choose(tensors)->set_data_type(some_elem_type());
        return true;
      }
      default: {
        for (::onnx::NodeProto* n : nodes_of(m))
          if (n->op_type() == "Cast" || n->op_type() == "ConstantOfShape" || n->op_type() == "EyeLike")
            for (auto& a : *n->mutable_attribute())
              if (a.name() == "to" || a.name() == "dtype") return a.set_i(some_elem_type()), true;
        return false;
      }
    }
  }

  // A node input or output replaced by another name of the same graph (or by nothing), or a node copied.
  bool rewire(::onnx::ModelProto& m) {
    std::vector<::onnx::GraphProto*> graphs;
    graphs_of(m.mutable_graph(), graphs);
    ::onnx::GraphProto& g = *choose(graphs);
    if (g.node_size() == 0) return false;
    std::vector<std::string> names = {""};
    for (const auto& v : g.input()) names.push_back(v.name());
    for (const auto& t : g.initializer()) names.push_back(t.name());
    for (const auto& n : g.node())
      for (const auto& o : n.output()) names.push_back(o);
    ::onnx::NodeProto& n = *g.mutable_node(static_cast<int>(pick(g.node_size())));
    switch (pick(4)) {
      case 0:
        if (n.input_size() == 0) return false;
        n.set_input(static_cast<int>(pick(n.input_size())), choose(names));
        return true;
      case 1: n.add_input(choose(names)); return true;
      case 2:
        if (n.output_size() == 0) return false;
        n.set_output(static_cast<int>(pick(n.output_size())), choose(names));
        return true;
      default: {
        ::onnx::NodeProto copy = n;
        for (auto& o : *copy.mutable_output()) o += "_copy";
        *g.add_node() = copy;
        return true;
      }
    }
  }

  static const std::vector<std::string>& trouble_ops() {
    static const std::vector<std::string> ops = {
        "Div", "Mod", "Neg", "Abs", "Mul", "Add", "Sub", "BitShift", "CumSum", "Range", "Tile", "Pad", "Split",
        "ConstantOfShape", "Expand", "Reshape", "Cast", "Gather", "Slice", "Concat", "Transpose", "TopK",
        "ReduceSum", "ReduceProd", "Pow", "Trilu", "OneHot", "Resize", "DepthToSpace", "Squeeze", "Unsqueeze",
        "Where", "Loop", "If", "Shape", "Size", "EyeLike", "NonZero", "ScatterND", "GatherND", "Einsum"};
    return ops;
  }
  bool op_type(::onnx::ModelProto& m) {
    auto nodes = nodes_of(m);
    if (nodes.empty()) return false;
    choose(nodes)->set_op_type(choose(trouble_ops()));
    return true;
  }

  // The default domain's version changed, or imported twice.
  bool opset(::onnx::ModelProto& m) {
    static const std::vector<int64_t> versions = {1, 7, 9, 11, 13, 17, 18, 21, 23, 99, -1};
    if (pick(3) == 0) {
      auto* o = m.add_opset_import();
      o->set_domain(pick(2) ? "" : "ai.onnx");
      o->set_version(choose(versions));
      return true;
    }
    for (auto& o : *m.mutable_opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx") return o.set_version(choose(versions)), true;
    return false;
  }

  ::onnx::TensorProto int64_constant(const std::vector<int64_t>& values, bool scalar) {
    ::onnx::TensorProto t;
    t.set_data_type(::onnx::TensorProto::INT64);
    if (!scalar) t.add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t.add_int64_data(v);
    return t;
  }
  // A node of a trouble op fed by Constant nodes holding extremes, appended to the main graph with its
  // output made a graph output: folding, inference and `run` all reach it.
  bool trouble_node(::onnx::ModelProto& m) {
    ::onnx::GraphProto& g = *m.mutable_graph();
    const std::string prefix = "fz" + std::to_string(g.node_size()) + "_";
    static const std::vector<std::string> ops = {"Div", "Mod", "Neg", "Abs", "Mul", "BitShift", "CumSum", "Range",
                                                 "Tile", "Pad", "Split", "ConstantOfShape", "Expand", "Reshape"};
    const std::string op = choose(ops);
    std::vector<std::string> inputs;
    const int arity = op == "Range" ? 3 : (op == "Neg" || op == "Abs" || op == "ConstantOfShape") ? 1 : 2;
    for (int k = 0; k < arity; ++k) {
      ::onnx::NodeProto* c = g.add_node();
      c->set_op_type("Constant");
      c->add_output(prefix + "c" + std::to_string(k));
      auto* a = c->add_attribute();
      a->set_name("value");
      a->set_type(::onnx::AttributeProto::TENSOR);
      const bool scalar = op == "Range" || ((op == "Div" || op == "Mod" || op == "Mul") && pick(2));
      std::vector<int64_t> values(scalar ? 1 : 1 + pick(3));
      for (int64_t& v : values) v = extreme_int();
      *a->mutable_t() = int64_constant(values, scalar);
      inputs.push_back(prefix + "c" + std::to_string(k));
    }
    ::onnx::NodeProto* n = g.add_node();
    n->set_op_type(op);
    for (const std::string& in : inputs) n->add_input(in);
    n->add_output(prefix + "y");
    if (op == "BitShift") {
      auto* a = n->add_attribute();
      a->set_name("direction");
      a->set_type(::onnx::AttributeProto::STRING);
      a->set_s(pick(2) ? "LEFT" : "RIGHT");
    }
    if (op == "Split" || op == "Mod") {
      auto* a = n->add_attribute();
      a->set_name(op == "Split" ? "num_outputs" : "fmod");
      a->set_type(::onnx::AttributeProto::INT);
      a->set_i(extreme_int());
    }
    auto* out = g.add_output();
    out->set_name(prefix + "y");
    return true;
  }

  // The main graph's nodes moved into f<depth>, called through a chain f0 -> f1 -> ... of `depth` calls.
  bool deep_chain(::onnx::ModelProto& m) {
    const std::size_t depth = choose(std::vector<std::size_t>{2, 64, 65, 100, 1000, 3000});
    return wrap_in_functions(m, depth, 1);
  }
  // The same, each function calling the next one twice: 2^levels nodes once expanded.
  bool wide_functions(::onnx::ModelProto& m) {
    return wrap_in_functions(m, choose(std::vector<std::size_t>{3, 10, 20, 40}), 2);
  }

  bool wrap_in_functions(::onnx::ModelProto& m, std::size_t levels, int calls) {
    ::onnx::GraphProto& g = *m.mutable_graph();
    if (g.input_size() == 0 || g.output_size() == 0 || g.node_size() == 0) return false;
    const std::string domain = "fz" + std::to_string(m.functions_size());
    // The innermost function computes the first output from the first input with the graph's nodes.
    auto* inner = m.add_functions();
    inner->set_domain(domain);
    inner->set_name("f" + std::to_string(levels));
    inner->add_input(g.input(0).name());
    inner->add_output(g.output(0).name());
    for (const auto& n : g.node()) *inner->add_node() = n;
    for (const auto& t : g.initializer()) {
      auto* c = inner->add_node();
      c->set_op_type("Constant");
      c->add_output(t.name());
      auto* a = c->add_attribute();
      a->set_name("value");
      a->set_type(::onnx::AttributeProto::TENSOR);
      *a->mutable_t() = t;
    }
    *inner->mutable_opset_import() = m.opset_import();
    for (std::size_t level = levels; level-- > 0;) {
      auto* f = m.add_functions();
      f->set_domain(domain);
      f->set_name("f" + std::to_string(level));
      f->add_input("x");
      f->add_output("y");
      std::string x = "x";
      for (int k = 0; k < calls; ++k) {
        auto* n = f->add_node();
        n->set_domain(domain);
        n->set_op_type("f" + std::to_string(level + 1));
        n->add_input(x);
        x = k + 1 == calls ? "y" : "t" + std::to_string(k);
        n->add_output(x);
      }
      *f->mutable_opset_import() = m.opset_import();
      auto* o = f->add_opset_import();
      o->set_domain(domain);
      o->set_version(1);
    }
    auto* o = m.add_opset_import();
    o->set_domain(domain);
    o->set_version(1);
    g.clear_node();
    g.clear_initializer();
    auto* call = g.add_node();
    call->set_domain(domain);
    call->set_op_type("f0");
    call->add_input(g.input(0).name());
    call->add_output(g.output(0).name());
    return true;
  }

  std::minstd_rand rng_;
};

}  // namespace xexp::fuzz

// libFuzzer's hook: structure-aware when XEXP_FUZZ_STRUCTURED is set (three mutations in four; the
// fourth, and inputs that do not parse, get libFuzzer's own byte mutations).
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  static const bool structured = [] {
    const char* v = std::getenv("XEXP_FUZZ_STRUCTURED");
    return v && *v && std::string(v) != "0";
  }();
  if (!structured || seed % 4 == 0) return LLVMFuzzerMutate(data, size, max_size);
  ::onnx::ModelProto m;
  if (!m.ParseFromArray(data, static_cast<int>(size))) return LLVMFuzzerMutate(data, size, max_size);
  xexp::fuzz::StructuredMutator mutator(seed);
  for (int attempt = 0; attempt < 4; ++attempt)
    if (mutator.mutate(m)) break;
  const std::string bytes = m.SerializeAsString();
  if (bytes.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, bytes.data(), bytes.size());
  return bytes.size();
}
