#pragma once
// ModelProto -> ir::Model, and load_model. One pass over the parsed proto: names are resolved once,
// strings and tensor data are moved out of the proto, never copied. Subgraphs read names of enclosing
// graphs through captured values (Graph::add_captured in the subgraph, Graph::add_captured_use on the
// node that owns it, at every level in between).
//
// Structural errors are found while building and reported as xexp::Error naming node and value: a
// node reading an undefined name, two nodes writing one value, a duplicate graph input or
// initializer, a cycle, a local function calling itself. Nodes that are acyclic but out of order are
// put in a topological order.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <unordered_set>
#include <vector>

#include "xexp/ir/model.hpp"
#include "xexp/onnx/attribute_proto.hpp"
#include "xexp/onnx/mapped_file.hpp"
#include "xexp/onnx/proto_fields.hpp"
#include "xexp/onnx/tensor_proto.hpp"
#include "xexp/onnx/validate.hpp"
#include "xexp/onnx/validate_opsets.hpp"

namespace xexp {

struct LoadOptions {
  // Directory that external data locations are relative to; load_model sets it to the model's own.
  std::string base_dir;
  // External data may name files outside base_dir (absolute paths, "..", links pointing out). Off: a
  // model must not make us read arbitrary files.
  bool allow_external_outside = false;
};

namespace detail {

// FunctionProto.attribute_proto (field 11, ONNX >= 1.13): attributes with defaults, unknown to 1.12.
inline constexpr int kFunctionAttributeProtoField = 11;

inline std::string node_label(const ::onnx::NodeProto& n) { return n.name().empty() ? n.op_type() : n.name(); }

class ModelReader {
 public:
  explicit ModelReader(const LoadOptions& options) : external_(options.base_dir, options.allow_external_outside) {}

  ir::Model read(::onnx::ModelProto& p) {
    ir::Model m;
    m.presence = (p.has_ir_version() << 1) | (p.has_producer_name() << 2) | (p.has_producer_version() << 3) |
                 (p.has_domain() << 4) | (p.has_model_version() << 5) | (p.has_doc_string() << 6) |
                 (p.has_graph() << 7);
    m.ir_version = p.ir_version();
    m.producer_name = std::move(*p.mutable_producer_name());
    m.producer_version = std::move(*p.mutable_producer_version());
    m.domain = std::move(*p.mutable_domain());
    m.model_version = p.model_version();
    m.doc_string = std::move(*p.mutable_doc_string());
    m.opsets = read_opsets(*p.mutable_opset_import(), "the model");
    if (p.has_graph()) read_graph(*p.mutable_graph(), *m.graph, nullptr);
    m.metadata_props.reserve(static_cast<std::size_t>(p.metadata_props_size()));
    for (auto& e : *p.mutable_metadata_props())
      m.metadata_props.emplace_back(std::move(*e.mutable_key()), std::move(*e.mutable_value()));
    for (const auto& t : p.training_info()) t.SerializeToString(&m.raw_training_info.emplace_back());
    m.functions.reserve(static_cast<std::size_t>(p.functions_size()));
    std::unordered_set<uint64_t> names;
    for (auto& f : *p.mutable_functions()) {
      if (!names.insert(op_key(Symbol(f.domain()), Symbol(f.name()))).second)  // a call would run the first only
        throw Error("two local functions have this domain and name", {.node = f.domain() + "." + f.name(), .value = {}});
      m.functions.push_back(read_function(f));
    }
    validate_function_calls(m);
    validate_op_opsets(m);
    m.unknown = unknown_of(p);
    return m;
  }

 private:
  // The graph being read, its enclosing scope, and the values of this graph that the subgraphs of
  // the node being read capture.
  struct Scope {
    ir::Graph* graph;
    Scope* outer;
    std::vector<ir::ValueId> node_captures;
  };

  // A name visible in `s`: its own value, or an enclosing one captured on the way down.
  static std::optional<ir::ValueId> resolve(Scope& s, std::string_view name) {
    if (auto id = s.graph->find(name)) return id;
    if (!s.outer) return std::nullopt;
    auto outer_id = resolve(*s.outer, name);
    if (!outer_id) return std::nullopt;
    auto& caps = s.outer->node_captures;
    if (std::find(caps.begin(), caps.end(), *outer_id) == caps.end()) caps.push_back(*outer_id);
    return s.graph->add_captured(std::string(name));
  }

  // A domain imported twice at one version is read once (what a second import would say is said); at two
  // versions it is refused: which one the nodes follow would be a guess. `where`: whose imports they are.
  static std::vector<ir::OpsetImport> read_opsets(google::protobuf::RepeatedPtrField<::onnx::OperatorSetIdProto>& ps,
                                                  const std::string& where) {
    std::vector<ir::OpsetImport> out;
    out.reserve(static_cast<std::size_t>(ps.size()));
    for (auto& o : ps) {
      if (const std::optional<int64_t> seen = ir::find_opset(out, o.domain())) {
        const std::string domain = o.domain().empty() ? "ai.onnx" : o.domain();
        if (*seen == o.version()) continue;
        throw Error(where + " imports opset " + domain + " twice, at versions " + std::to_string(*seen) + " and " +
                    std::to_string(o.version()));
      }
      ir::OpsetImport& r = out.emplace_back();
      r.presence = static_cast<uint8_t>((o.has_domain() ? ir::kHasDomain : 0) | (o.has_version() ? ir::kHasVersion : 0));
      r.domain = std::move(*o.mutable_domain());
      r.version = o.version();
      r.unknown = unknown_of(o);
    }
    return out;
  }

  void read_graph(::onnx::GraphProto& gp, ir::Graph& g, Scope* outer) {
    Scope scope{&g, outer, {}};
    g.parent = outer ? outer->graph : nullptr;
    g.presence = static_cast<uint8_t>((gp.has_name() ? ir::kHasName : 0) | (gp.has_doc_string() ? ir::kHasDocString : 0));
    g.name = std::move(*gp.mutable_name());
    g.doc_string = std::move(*gp.mutable_doc_string());
    std::size_t value_estimate = static_cast<std::size_t>(gp.input_size() + gp.initializer_size());
    for (const auto& n : gp.node()) value_estimate += static_cast<std::size_t>(n.output_size());
    g.reserve(static_cast<std::size_t>(gp.node_size()), value_estimate);

    for (auto& vi : *gp.mutable_input()) {
      if (g.has_value(vi.name())) throw Error("duplicate graph input", {.node = {}, .value = vi.name()});
      ir::ValueId id = g.add_input(vi.name());
      read_value_info(vi, g.value(id));
    }
    std::vector<ir::ValueId> initializer_order;
    initializer_order.reserve(static_cast<std::size_t>(gp.initializer_size()));
    for (auto& tp : *gp.mutable_initializer()) {
      if (tp.name().empty()) throw Error("an initializer has no name");
      std::string name = tp.name();  // read before the proto's data is taken over
      initializer_order.push_back(add_initializer(g, name, read_tensor(std::move(tp), &external_)));
    }
    for (auto& sp : *gp.mutable_sparse_initializer()) {
      const std::string& name = sp.values().name();
      ir::ValueId id = g.has_value(name) ? g.at(name) : g.add_value(name);
      ir::Value& v = g.value(id);
      if (v.is_initializer() || (!v.is_input && v.elem != ElemType::Undefined))
        throw Error("duplicate initializer", {.node = {}, .value = name});
      if (!v.is_input) {
        v.elem = static_cast<ElemType>(sp.values().data_type());
        v.shape = make_shape(std::vector<int64_t>(sp.dims().begin(), sp.dims().end()));
      }
      sp.SerializeToString(&v.raw_sparse_initializer);
    }
    read_nodes(*gp.mutable_node(), scope);
    for (auto& vi : *gp.mutable_output()) {
      auto id = resolve(scope, vi.name());
      if (!id) throw Error("graph output is not defined", {.node = {}, .value = vi.name()});
      read_value_info(vi, g.value(*id));
      g.add_output(*id);
    }
    g.value_info().reserve(static_cast<std::size_t>(gp.value_info_size()));
    for (auto& vi : *gp.mutable_value_info()) {
      // An annotation of a name nothing defines is kept on a value of its own, so it is not lost.
      auto found = g.find(vi.name());
      ir::ValueId id = found ? *found : g.add_value(vi.name());
      read_value_info(vi, g.value(id));
      g.value_info().push_back(id);
    }
    for (const auto& q : gp.quantization_annotation())
      q.SerializeToString(&g.raw_quantization_annotations.emplace_back());
    g.unknown = unknown_of(gp);
    g.set_initializer_order(std::move(initializer_order));
  }

  static ir::ValueId add_initializer(ir::Graph& g, const std::string& name, Tensor t) {
    auto existing = g.find(name);
    if (!existing) return g.add_initializer(name, std::move(t));
    ir::Value& v = g.value(*existing);
    if (!v.is_input || v.is_initializer()) throw Error("duplicate initializer", {.node = {}, .value = name});
    v.initializer = std::move(t);  // an input with a default value (IR < 4 style): keeps its declared type
    return *existing;
  }

  struct PendingNode {
    ::onnx::NodeProto* proto;
    std::vector<ir::ValueId> inputs, outputs, captured;
    std::vector<ir::Attribute> attributes;
  };

  void read_nodes(google::protobuf::RepeatedPtrField<::onnx::NodeProto>& nodes, Scope& scope) {
    ir::Graph& g = *scope.graph;
    const auto n = static_cast<std::size_t>(nodes.size());
    std::vector<PendingNode> pending(n);
    std::vector<uint32_t> producer_of(g.value_capacity(), ir::kNone);  // value -> index in `pending`
    // Pass 1: every output exists before any input is resolved (so order problems read as cycles,
    // not as undefined names, and subgraphs see all values of their enclosing graph).
    for (std::size_t k = 0; k < n; ++k) {
      ::onnx::NodeProto& np = nodes[static_cast<int>(k)];
      pending[k].proto = &np;
      pending[k].outputs.reserve(static_cast<std::size_t>(np.output_size()));
      for (const std::string& name : np.output()) {
        if (name.empty()) {
          pending[k].outputs.push_back(ir::kNone);
          continue;
        }
        if (auto existing = g.find(name)) throw duplicate_output(np, g, *existing, producer_of, pending);
        ir::ValueId id = g.add_value(name);
        if (producer_of.size() <= id) producer_of.resize(id + 1, ir::kNone);
        producer_of[id] = static_cast<uint32_t>(k);
        pending[k].outputs.push_back(id);
      }
    }
    // Pass 2: inputs, attributes and subgraphs.
    for (PendingNode& pn : pending) {
      ::onnx::NodeProto& np = *pn.proto;
      pn.inputs.reserve(static_cast<std::size_t>(np.input_size()));
      for (const std::string& name : np.input()) {
        if (name.empty()) {
          pn.inputs.push_back(ir::kNone);
          continue;
        }
        auto id = resolve(scope, name);
        if (!id)
          throw Error(scope.outer ? "the node reads an undefined value (defined neither in its subgraph "
                                    "nor in an enclosing graph)"
                                  : "the node reads an undefined value",
                      {.node = node_label(np), .value = name});
        pn.inputs.push_back(*id);
      }
      pn.attributes.reserve(static_cast<std::size_t>(np.attribute_size()));
      for (auto& a : *np.mutable_attribute()) {
        try {
          pn.attributes.push_back(read_attribute(
              a, [&](::onnx::GraphProto& sub) { return read_subgraph(sub, scope); }, &external_));
        } catch (const Error& e) {
          if (!e.node().empty()) throw;  // from a subgraph: names its own node
          throw Error("attribute '" + a.name() + "': " + e.cause(), {.node = node_label(np), .value = e.value()});
        }
      }
      pn.captured = std::move(scope.node_captures);
      scope.node_captures.clear();
    }
    for (uint32_t k : execution_order(pending, producer_of, g)) {
      PendingNode& pn = pending[k];
      ::onnx::NodeProto& np = *pn.proto;
      // Presence first: mutable_name() and friends mark a field present.
      const auto presence = static_cast<uint8_t>((np.has_name() ? ir::kHasName : 0) |
                                                 (np.has_domain() ? ir::kHasDomain : 0) |
                                                 (np.has_doc_string() ? ir::kHasDocString : 0));
      ir::NodeId id = g.add_node(Symbol(np.op_type()), std::move(pn.inputs), std::move(pn.outputs),
                                 std::move(pn.attributes), std::move(*np.mutable_name()), Symbol(np.domain()));
      ir::Node& node = g.node(id);
      node.presence = presence;
      node.doc_string = std::move(*np.mutable_doc_string());
      node.unknown = unknown_of(np);
      for (ir::ValueId c : pn.captured) g.add_captured_use(id, c);
    }
  }

  static Error duplicate_output(const ::onnx::NodeProto& np, const ir::Graph& g, ir::ValueId id,
                                const std::vector<uint32_t>& producer_of, const std::vector<PendingNode>& pending) {
    const ir::Value& v = g.value(id);
    std::string cause = v.is_input ? "the node writes a graph input"
                        : v.is_initializer() ? "the node writes an initializer"
                                             : "the node writes a value defined twice";
    if (id < producer_of.size() && producer_of[id] != ir::kNone)
      cause = "two nodes write the same value (the first is '" + node_label(*pending[producer_of[id]].proto) + "')";
    return Error(cause, {.node = node_label(np), .value = v.name});
  }

  std::shared_ptr<ir::Graph> read_subgraph(::onnx::GraphProto& gp, Scope& scope) {
    auto g = std::make_shared<ir::Graph>();
    read_graph(gp, *g, &scope);
    return g;
  }

  // File order when it is a topological order (the usual case, checked in one pass); otherwise a
  // stable topological sort. A cycle is an error naming one node on it and the value it waits for.
  static std::vector<uint32_t> execution_order(const std::vector<PendingNode>& pending,
                                               const std::vector<uint32_t>& producer_of, const ir::Graph& g) {
    const auto n = static_cast<uint32_t>(pending.size());
    auto producer = [&](ir::ValueId v) { return v != ir::kNone && v < producer_of.size() ? producer_of[v] : ir::kNone; };
    auto for_each_dependency = [&](const PendingNode& pn, auto&& f) {
      for (ir::ValueId v : pn.inputs) f(v);
      for (ir::ValueId v : pn.captured) f(v);
    };
    std::vector<uint32_t> order(n);
    bool sorted = true;
    for (uint32_t k = 0; k < n && sorted; ++k) {
      order[k] = k;
      for_each_dependency(pending[k], [&](ir::ValueId v) {
        if (uint32_t p = producer(v); p != ir::kNone && p >= k) sorted = false;
      });
    }
    if (sorted) return order;

    std::vector<std::vector<uint32_t>> successors(n);
    std::vector<uint32_t> waiting(n, 0);
    for (uint32_t k = 0; k < n; ++k)
      for_each_dependency(pending[k], [&](ir::ValueId v) {
        if (uint32_t p = producer(v); p != ir::kNone) {
          successors[p].push_back(k);
          ++waiting[k];
        }
      });
    std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> ready;
    for (uint32_t k = 0; k < n; ++k)
      if (waiting[k] == 0) ready.push(k);
    order.clear();
    while (!ready.empty()) {
      uint32_t k = ready.top();
      ready.pop();
      order.push_back(k);
      for (uint32_t s : successors[k])
        if (--waiting[s] == 0) ready.push(s);
    }
    if (order.size() == n) return order;
    for (uint32_t k = 0; k < n; ++k) {
      if (waiting[k] == 0) continue;
      std::string value;
      for_each_dependency(pending[k], [&](ir::ValueId v) {
        if (uint32_t p = producer(v); value.empty() && p != ir::kNone && waiting[p] > 0) value = g.value(v).name;
      });
      throw Error("the graph has a cycle", {.node = node_label(*pending[k].proto), .value = value});
    }
    return order;
  }

  ir::Function read_function(::onnx::FunctionProto& fp) {
    ir::Function f;
    f.presence = static_cast<uint8_t>((fp.has_name() ? ir::kHasName : 0) | (fp.has_domain() ? ir::kHasDomain : 0) |
                                      (fp.has_doc_string() ? ir::kHasDocString : 0));
    f.name = std::move(*fp.mutable_name());
    f.domain = std::move(*fp.mutable_domain());
    f.doc_string = std::move(*fp.mutable_doc_string());
    f.attributes.assign(fp.attribute().begin(), fp.attribute().end());
    f.opsets = read_opsets(*fp.mutable_opset_import(), "function " + f.domain + "." + f.name);
    ir::Graph& body = *f.body;
    for (const std::string& name : fp.input()) {
      if (body.has_value(name)) throw Error("duplicate function input", {.node = f.name, .value = name});
      body.add_input(name);
    }
    Scope scope{&body, nullptr, {}};
    read_nodes(*fp.mutable_node(), scope);
    for (const std::string& name : fp.output()) {
      auto id = body.find(name);
      if (!id) throw Error("function output is not defined", {.node = f.name, .value = name});
      body.add_output(*id);
    }
    read_function_unknown(fp, f);
    return f;
  }

  // Splits the unknown fields: attribute_proto entries become Function::attribute_defaults, the
  // rest stays serialized.
  void read_function_unknown(::onnx::FunctionProto& fp, ir::Function& f) {
    auto* unknown = fp.mutable_unknown_fields();
    for (int k = 0; k < unknown->field_count(); ++k) {
      const auto& field = unknown->field(k);
      if (field.number() != kFunctionAttributeProtoField ||
          field.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
        continue;
      ::onnx::AttributeProto a;
      if (!a.ParseFromString(field.length_delimited())) throw Error("bad attribute_proto", {.node = f.name, .value = {}});
      f.attribute_defaults.push_back(read_attribute(
          a, [&](::onnx::GraphProto&) -> std::shared_ptr<ir::Graph> { throw Error("graph-valued function attribute default", {.node = f.name, .value = a.name()}); },
          &external_));
      unknown->DeleteSubrange(k--, 1);
    }
    f.unknown = unknown_of(fp);
  }

  ExternalFiles external_;
};

}  // namespace detail

namespace detail {
// Small files are parsed from a mapping (fastest); large ones through a buffered read, so that the
// file's pages and the parsed weights are not both resident at the peak (memory close to 1x, not 2x).
inline bool parse_model_file(const std::string& path, ::onnx::ModelProto& proto) {
  constexpr std::size_t kMapLimit = std::size_t{64} << 20;
  auto file = MappedFile::open(path);
  if (file->size() == 0) throw Error("cannot load '" + path + "': empty file");
  if (file->size() > static_cast<std::size_t>(INT32_MAX))
    throw Error("cannot load '" + path + "': larger than 2 GB (protobuf's limit); use external data");
  if (file->size() <= kMapLimit) return proto.ParseFromArray(file->bytes().data(), static_cast<int>(file->size()));
  file.reset();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // MappedFile::open's reasons
  if (fd < 0) throw Error("cannot open '" + path + "': " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {  // replaced since it was mapped
    ::close(fd);
    throw Error("cannot read '" + path + "': not a regular file");
  }
  const bool ok = proto.ParseFromFileDescriptor(fd);
  ::close(fd);
  return ok;
}
}  // namespace detail

// Builds the IR from a parsed model, taking its strings and tensor data over (the proto is left
// empty-ish: consumed).
inline ir::Model model_from_proto(::onnx::ModelProto&& proto, const LoadOptions& options = {}) {
  detail::ModelReader reader(options);
  return reader.read(proto);
}

// Reads a model file (and its external data, relative to the file's directory).
inline ir::Model load_model(const std::string& path, const LoadOptions& options = {}) {
  ::onnx::ModelProto proto;
  if (!detail::parse_model_file(path, proto))
    throw Error("not an ONNX model: '" + path +
                "' does not parse as a ModelProto (truncated, another format, or messages nested deeper than "
                "protobuf's limit of 100)");
  if (!proto.has_graph() || !proto.has_ir_version())
    throw Error("not an ONNX model: '" + path + "' has no " + (proto.has_graph() ? "ir_version" : "graph"));
  LoadOptions with_dir = options;
  if (with_dir.base_dir.empty()) with_dir.base_dir = detail::directory_of(path);
  return model_from_proto(std::move(proto), with_dir);
}

}  // namespace xexp
