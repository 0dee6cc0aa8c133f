#pragma once
// Types on load: infer_model_types gives every value of a model's main graph and its subgraphs its
// element type and shape before anything reads them (exporters write no value_info, and most rules
// read shapes).
//   1. our own rules, node by node (infer_node);
//   2. where they left a type or a shape unknown, ONNX's shape inference (libonnx) over a copy of the
//      model without its weights, as the fallback for ops we have no rule for;
//   3. our rules again, so that what ONNX found flows on through the ops only we know (com.microsoft);
//   4. the symbols the file or ONNX named and ours found equal are written back as one name.
// Symbolic dimensions are kept and propagated. Types already in the file are kept when consistent. A
// shape the file declares for a node output and the node contradicts is the exporter's mistake: the
// node's shape replaces it, as ONNX Runtime does (InferState::node_shapes_win). Any other contradiction
// (element types, a node its inputs contradict) is an xexp::Error naming the node and the value. Each
// step visits each node once; step 2 and 3 are skipped when step 1 left nothing unknown and every op
// has a rule of ours.
#include <algorithm>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

// <sys/mman.h> (onnx/mapped_file.hpp) defines MAP_TYPE, a name ONNX's parser.h declares.
#pragma push_macro("MAP_TYPE")
#undef MAP_TYPE
#include <onnx/shape_inference/implementation.h>
#pragma pop_macro("MAP_TYPE")

#include "xexp/infer/infer.hpp"
#include "xexp/ir/cleanup.hpp"
#include "xexp/ir/copy.hpp"
#include "xexp/ir/model.hpp"
#include "xexp/onnx/proto_fields.hpp"
#include "xexp/onnx/save.hpp"
#include "xexp/onnx/validate.hpp"

namespace xexp::infer {

// Infers one node (infer_node, or one that also goes through local function calls).
using NodeInference = std::function<void(ir::Graph&, ir::NodeId, int64_t opset, InferState&)>;

namespace detail {

// Whether every node output has an element type and a shape without unknown dimensions (values of
// other kinds, sequences or optionals, count as known: neither ours nor ONNX's step adds to them).
inline bool fully_typed(const ir::Graph& g) {
  for (ir::NodeId n : g.nodes())
    for (ir::ValueId out : g.node(n).outputs) {
      if (out == ir::kNone) continue;
      const ir::Value& v = g.value(out);
      if (!v.raw_type.empty()) continue;
      if (v.elem == ElemType::Undefined || !v.shape) return false;
      for (const Dim& d : *v.shape)
        if (d.is_unknown()) return false;
    }
  return true;
}

// Initializers up to this many elements go to ONNX's inference with their values (shapes, axes, ...
// that its rules read); larger ones go as typed graph inputs, so the weights are never copied.
inline constexpr int64_t kOnnxConstantElements = 4096;

// Whether ONNX's inference may be given the local functions: it infers each call by inferring the
// callee's body again, so functions expanding past the bound of inlining and evaluation would take it
// forever (2^40 nodes from a 3 KB file); their calls are then left to our rules.
inline bool onnx_may_expand_functions(const ir::Model& model) {
  try {
    check_function_expansion(model, kDefaultMaxNodes);
    return true;
  } catch (const Error&) {
    return false;
  }
}

// The model as ONNX's inference needs it: every typed value given as value_info, weights left out.
// Outputs of ONNX's own ops keep only the element type where the file declared their shape: ONNX's
// inference computes it, and would stop on a wrong declaration instead of replacing it.
inline ::onnx::ModelProto proto_for_onnx_inference(const ir::Model& model, const InferState& state) {
  ir::Model copy;
  copy.ir_version = model.ir_version;
  copy.opsets = model.opsets;
  copy.graph = ir::clone(*model.graph);
  const bool with_functions = onnx_may_expand_functions(model);
  for (const ir::Function& f : model.functions) {
    if (!with_functions) break;
    ir::Function& c = copy.functions.emplace_back();
    c.name = f.name;
    c.domain = f.domain;
    c.attributes = f.attributes;
    c.attribute_defaults = f.attribute_defaults;
    c.opsets = f.opsets;
    c.body = ir::clone(*f.body);
    c.presence = f.presence;
  }
  ir::Graph& g = *copy.graph;
  for (ir::NodeId n : model.graph->nodes()) {
    if (!model.graph->node(n).domain.empty()) continue;
    for (ir::ValueId out : model.graph->node(n).outputs)
      if (out != ir::kNone && state.shape_declared(out))
        g.value(g.at(model.graph->value(out).name)).shape.reset();
  }
  std::vector<ir::ValueId> inputs = g.inputs(), small;
  for (ir::ValueId id : g.initializers()) {
    ir::Value& v = g.value(id);
    if (!v.initializer || (v.initializer->available() && v.initializer->size() <= kOnnxConstantElements)) {
      small.push_back(id);
      continue;
    }
    v.initializer.reset();
    if (!v.is_input) {
      v.is_input = true;
      inputs.push_back(id);
    }
  }
  g.set_inputs(std::move(inputs));
  g.set_initializer_order(std::move(small));
  SaveOptions options;
  options.write_inferred_value_info = true;
  return model_to_proto(copy, options);
}

// ONNX's inference stops on a type it infers that contradicts one already known ("(op_type:Relu, node
// name: relu): [ShapeInferenceError] Inferred shape and existing shape differ ..."): that is the
// model's value_info contradicting its nodes, reported as our own contradictions are. Any other
// failure only means ONNX's step has nothing to add (it rejects some models ONNX Runtime runs).
inline void throw_if_contradiction(const ir::Graph& g, const std::string& message) {
  if (message.find("Inferred") == std::string::npos || message.find("existing") == std::string::npos) return;
  std::string node;
  if (const std::size_t at = message.find("node name: "); at != std::string::npos)
    node = message.substr(at + 11, message.find(')', at) - at - 11);
  std::string values;
  for (ir::NodeId n : g.nodes())
    if (g.node(n).name == node) {
      for (ir::ValueId out : g.node(n).outputs)
        if (out != ir::kNone) values += (values.empty() ? "" : ", ") + g.value(out).name;
      break;
    }
  throw Error("ONNX's shape inference contradicts the types already known: " + message,
              {.node = node, .value = values});
}

// ONNX's inference functions trust each node to fit its schema (a Scan without its `body` crashes
// libonnx's): every node, subgraphs included, is checked against its schema first. A model that does
// not fit gets nothing from ONNX's step; its errors come from our rules and the evaluator.
inline bool nodes_fit_their_schemas(const ::onnx::ModelProto& proto) {
  std::unordered_map<std::string, int> versions;
  for (const auto& opset : proto.opset_import())
    versions[opset.domain() == "ai.onnx" ? std::string() : opset.domain()] = static_cast<int>(opset.version());
  std::vector<const ::onnx::GraphProto*> graphs{&proto.graph()};
  while (!graphs.empty()) {
    const ::onnx::GraphProto& graph = *graphs.back();
    graphs.pop_back();
    for (const ::onnx::NodeProto& node : graph.node()) {
      for (const ::onnx::AttributeProto& a : node.attribute()) {
        if (a.has_g()) graphs.push_back(&a.g());
        for (const ::onnx::GraphProto& g : a.graphs()) graphs.push_back(&g);
      }
      const std::string domain = node.domain() == "ai.onnx" ? std::string() : node.domain();
      const auto version = versions.find(domain);
      if (version == versions.end()) continue;
      const ::onnx::OpSchema* schema =
          ::onnx::OpSchemaRegistry::Schema(node.op_type(), version->second, domain);
      if (!schema) continue;
      try {
        schema->Verify(node);
      } catch (const std::exception&) {
        return false;
      }
    }
  }
  return true;
}

// Each dimension a node of `graph` computes becomes its class's representative, or its bound size;
// `sizes_only`: only the symbols bound to a size change (see infer_with_subgraphs).
inline void canonicalize_graph_dims(ir::Graph& graph, const ShapeConstraints& constraints, bool sizes_only) {
  for (ir::NodeId n : graph.nodes())
    for (ir::ValueId out : graph.node(n).outputs)
      if (out != ir::kNone && graph.value(out).shape)
        for (Dim& d : *graph.value(out).shape)
          if (const Dim c = constraints.canonical(d); !sizes_only || c.is_static()) d = c;
}

// A subgraph's own inference state: the dimension equalities known outside hold inside (not the
// reverse: a branch may not run), and the contents of the shape values it reads from outside.
inline InferState subgraph_state(const ir::Graph& outer, const InferState& outer_state, const ir::Graph& body) {
  InferState inner;
  inner.constraints = outer_state.constraints;
  inner.constant = outer_state.constant;
  for (ir::ValueId id : body.captured())
    if (const std::optional<ir::ValueId> from = outer.find(body.value(id).name))
      if (const Shape* content = outer_state.value_shapes.find(*from)) inner.value_shapes.set(id, *content);
  return inner;
}

// Types of what a subgraph receives, where the file gives none: the enclosing values it reads (their
// types there), Loop's iteration number and condition, the element type of what Loop and Scan carry,
// and Scan's slices (the scanned input's shape without the scanned axis).
inline void type_subgraph_inputs(const ir::Graph& outer, const ir::Node& node, int64_t opset, ir::Graph& body) {
  for (ir::ValueId id : body.captured()) {
    ir::Value& v = body.value(id);
    if (v.has_type()) continue;
    const auto [defining, defined] = ir::definition_of(body, id);
    const ir::Value& d = defining->value(defined);
    v.elem = d.elem;
    v.shape = d.shape;
    v.raw_type = d.raw_type;
  }
  const std::string_view op = node.op_type.view();
  if (!node.domain.empty() || (op != "Loop" && op != "Scan")) return;
  const std::vector<ir::ValueId>& inputs = body.inputs();
  // Scan before opset 9 takes sequence_lens first.
  const std::size_t offset = op == "Scan" && opset < 9 ? 1 : 0;
  const ir::Attribute* scanned = node.attribute(Symbol("num_scan_inputs"));
  const std::size_t scans = scanned ? static_cast<std::size_t>(std::max<int64_t>(scanned->i, 0)) : 0;
  const std::size_t states = inputs.size() - std::min(inputs.size(), scans);
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    ir::Value& v = body.value(inputs[k]);
    if (v.has_type()) continue;
    if (op == "Loop" && k < 2) {
      v.elem = k == 0 ? ElemType::Int64 : ElemType::Bool;
      v.shape = Shape{};
      continue;
    }
    const std::size_t slot = k + offset;
    if (slot >= node.inputs.size() || node.inputs[slot] == ir::kNone) continue;
    const ir::Value& from = outer.value(node.inputs[slot]);
    v.elem = from.elem;
    if (op != "Scan" || k < states || !from.shape || from.shape->empty()) continue;
    const ir::Attribute* axes = node.attribute(Symbol("scan_input_axes"));
    const auto rank = static_cast<int64_t>(from.shape->size());
    int64_t axis = axes && k - states < axes->ints.size() ? axes->ints[k - states] : 0;
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) continue;
    Shape slice = *from.shape;
    slice.erase(slice.begin() + axis);
    v.shape = std::move(slice);
  }
}

// An If's outputs take what both branches agree on: the element type, and the dimensions both give.
inline void type_if_outputs(ir::Graph& g, ir::NodeId n, int64_t opset, InferState& state) {
  const ir::Node& node = g.node(n);
  const ir::Attribute* then_branch = node.attribute(Symbol("then_branch"));
  const ir::Attribute* else_branch = node.attribute(Symbol("else_branch"));
  if (!then_branch || !else_branch || then_branch->graphs.empty() || else_branch->graphs.empty()) return;
  const ir::Graph& a = *then_branch->graph();
  const ir::Graph& b = *else_branch->graph();
  InferContext context(g, n, opset, state);
  for (std::size_t k = 0; k < node.outputs.size() && k < a.outputs().size() && k < b.outputs().size(); ++k) {
    const ir::Value& x = a.value(a.outputs()[k]);
    const ir::Value& y = b.value(b.outputs()[k]);
    if (x.elem == ElemType::Undefined || x.elem != y.elem || !x.raw_type.empty() || !y.raw_type.empty()) continue;
    std::optional<Shape> shape;
    if (x.shape && y.shape && x.shape->size() == y.shape->size()) {
      shape = Shape(x.shape->size());
      for (std::size_t d = 0; d < shape->size(); ++d)
        if (!(*x.shape)[d].is_unknown() && (*x.shape)[d] == (*y.shape)[d]) (*shape)[d] = (*x.shape)[d];
    }
    context.set_output(k, x.elem, std::move(shape));
  }
}

// Our rules over `g` in execution order, into each subgraph of a node before the nodes after it.
inline void infer_with_subgraphs(ir::Graph& g, int64_t opset, InferState& state, const NodeInference& infer_one) {
  for (ir::NodeId n : g.nodes()) {
    if (infer_one) infer_one(g, n, opset, state);
    else infer_node(g, n, opset, state);
    if (!g.node(n).has_subgraphs()) continue;
    for (const ir::Attribute& a : g.node(n).attributes)
      for (const std::shared_ptr<ir::Graph>& body : a.graphs) {
        type_subgraph_inputs(g, g.node(n), opset, *body);
        InferState inner = subgraph_state(g, state, *body);
        infer_with_subgraphs(*body, opset, inner, infer_one);
      }
    if (g.node(n).domain.empty() && g.node(n).op_type.view() == "If") type_if_outputs(g, n, opset, state);
  }
  // A model typed before (optimized, then typed again): a value of a rank unknown then, known now, had
  // Shape(x) typed (unk__22), which this pass bound to x's rank. The size replaces the symbol, so that
  // folding sees a static shape (silero's VAD tests the rank of its spectrogram).
  canonicalize_graph_dims(g, state.constraints, true);
}

// Whether node `n` reads a tensor whose static sizes multiply past int64: no such tensor exists (a hostile
// file), and ONNX's inference computes with wrapped products there (the -1 of a Reshape of (2^40, 2^40)
// came back as 0), so it is not taken for the node's outputs.
inline bool reads_overflowing_shape(const ir::Graph& g, const ir::Node& n) {
  return std::any_of(n.inputs.begin(), n.inputs.end(), [&](ir::ValueId in) {
    return in != ir::kNone && g.value(in).shape && static_sizes_overflow(*g.value(in).shape);
  });
}

// What ONNX's inference wrote into `gp` (value_info and outputs, subgraphs included) merged into `g`, the
// graph `gp` was written from (same nodes in the same order). Returns whether it added anything.
inline bool merge_inferred_types(::onnx::GraphProto& gp, ir::Graph& g, int64_t opset, InferState& state) {
  bool added = false;
  auto merge = [&](::onnx::ValueInfoProto& vi) {
    if (!vi.has_type()) return;
    const std::optional<ir::ValueId> id = g.find(vi.name());
    if (!id) return;
    const ir::Value& v = g.value(*id);
    if (v.producer == ir::kNone || !v.raw_type.empty() || reads_overflowing_shape(g, g.node(v.producer)))
      return;
    ir::Value found;
    xexp::detail::read_type(vi.type(), found);
    if (!found.raw_type.empty()) return;
    const bool new_type = v.elem == ElemType::Undefined && found.elem != ElemType::Undefined;
    const bool new_shape = found.shape && (!v.shape || *v.shape != *found.shape);
    if (!new_type && !new_shape) return;
    InferContext(g, v.producer, opset, state).set_output(v.output_index, found.elem, std::move(found.shape));
    added = true;
  };
  for (auto& vi : *gp.mutable_value_info()) merge(vi);
  for (auto& vi : *gp.mutable_output()) merge(vi);
  int k = 0;
  for (ir::NodeId n : g.nodes()) {
    if (k >= gp.node_size()) break;
    ::onnx::NodeProto& np = *gp.mutable_node(k++);
    if (!g.node(n).has_subgraphs()) continue;
    for (auto& a : *np.mutable_attribute()) {
      const ir::Attribute* attribute = g.node(n).attribute(Symbol(a.name()));
      if (!attribute) continue;
      std::vector<::onnx::GraphProto*> protos;
      if (a.has_g()) protos.push_back(a.mutable_g());
      for (auto& sub : *a.mutable_graphs()) protos.push_back(&sub);
      for (std::size_t i = 0; i < protos.size() && i < attribute->graphs.size(); ++i) {
        ir::Graph& body = *attribute->graphs[i];
        InferState inner = subgraph_state(g, state, body);
        added = merge_inferred_types(*protos[i], body, opset, inner) || added;
      }
    }
  }
  return added;
}

// Whether an integer constant holds a 0 or a -1 (a divisor libonnx divides by as it is).
inline bool holds_zero_or_minus_one(const Tensor& t) {
  auto any_of = [](auto values) {
    return std::any_of(values.begin(), values.end(), [](auto x) { return x == 0 || x == -1; });
  };
  if (t.type() == ElemType::Int64) return any_of(t.data<int64_t>());
  if (t.type() == ElemType::Int32) return any_of(t.data<int32_t>());
  return false;
}

// libonnx 1.12 propagates the values of shapes through Add, Sub, Mul and Div reading the first element
// of an empty operand (a segmentation fault on Mul(size, an empty constant)) and dividing by the divisor
// as it is (SIGFPE on 0, and on -1 under INT64_MIN). ONNX's inference of a model where an integer
// operand of theirs is empty, or a divisor is not a constant free of 0 and -1, goes without that
// propagation.
inline bool onnx_data_propagation_is_safe(const ir::Graph& main) {
  static const Symbol add("Add"), sub("Sub"), mul("Mul"), div("Div");
  bool safe = true;
  auto check = [&](const ir::Graph& g) {
    for (ir::NodeId id : g.nodes()) {
      const ir::Node& n = g.node(id);
      if (!n.domain.empty() || !(n.op_type == add || n.op_type == sub || n.op_type == mul || n.op_type == div))
        continue;
      for (std::size_t k = 0; k < n.inputs.size(); ++k) {
        if (n.inputs[k] == ir::kNone) continue;
        const ir::Value& v = g.value(n.inputs[k]);
        if (v.elem != ElemType::Int64 && v.elem != ElemType::Int32) continue;
        if (v.shape && std::any_of(v.shape->begin(), v.shape->end(),
                                   [](const Dim& d) { return d.is_static() && d.value() == 0; }))
          safe = false;
        if (n.op_type == div && k == 1) {
          const Tensor* divisor = graph_constant(g, n.inputs[k]);
          if (!divisor || holds_zero_or_minus_one(*divisor)) safe = false;
        }
      }
    }
  };
  check(main);
  ir::for_each_subgraph(main, check);
  return safe;
}

// Step 2: what ONNX's inference finds for node outputs, merged into `model` as our own rules' results
// are. Returns whether it added anything.
inline bool merge_onnx_inference(ir::Model& model, int64_t opset, InferState& state) {
  ::onnx::ModelProto proto = proto_for_onnx_inference(model, state);
  if (!nodes_fit_their_schemas(proto)) return false;
  try {
    ::onnx::shape_inference::InferShapes(
        proto, ::onnx::OpSchemaRegistry::Instance(),
        ::onnx::ShapeInferenceOptions(false, 0, onnx_data_propagation_is_safe(*model.graph)));
  } catch (const std::exception& e) {
    throw_if_contradiction(*model.graph, e.what());
    return false;
  }
  return merge_inferred_types(*proto.mutable_graph(), *model.graph, opset, state);
}

// Symbols ONNX named before our rules learned they are equal (a stride-1 Conv after a stride-2 one: ONNX
// names the first output's height unk__0 and the second's unk__2, ours then finds them the same): every
// dimension a node of `g` or of its subgraphs computes becomes its class's representative (or its bound
// size), so that printed and saved shapes name each size once.
inline void canonicalize_dims(ir::Graph& g, const ShapeConstraints& constraints) {
  canonicalize_graph_dims(g, constraints, false);
  ir::for_each_subgraph(g, [&](ir::Graph& body) { canonicalize_graph_dims(body, constraints, false); });
}

}  // namespace detail

// Infers the types and shapes of the main graph of `model` and of its subgraphs (If, Loop and Scan
// bodies, nested; see the top of this file). `infer_one`
// replaces infer_node for step 1 and 3 (functions/infer_call.hpp passes one going through calls).
// Returns the declared shapes that gave way to the nodes' (InferState::replaced_declarations).
inline std::vector<std::string> infer_model_types(ir::Model& model, const NodeInference& infer_one = {}) {
  ir::Graph& g = *model.graph;
  const int64_t opset = model.opset("").value_or(0);
  InferState state;
  state.node_shapes_win = true;
  state.declared_shapes.resize(g.value_capacity());
  for (ir::NodeId n : g.nodes())
    for (ir::ValueId out : g.node(n).outputs)
      if (out != ir::kNone && g.value(out).shape) state.declared_shapes[out] = true;
  auto our_rules = [&] { detail::infer_with_subgraphs(g, opset, state, infer_one); };
  our_rules();
  // ONNX's step also runs when some op has no rule of ours, to check the file's types of its outputs.
  bool every_op_ours = true;
  for (ir::NodeId n : g.nodes()) {
    const ir::Node& node = g.node(n);
    if (!has_rule(node.domain, node.op_type) && !model.find_function(node.domain.view(), node.op_type.view())) {
      every_op_ours = false;
      break;
    }
  }
  if (!(every_op_ours && detail::fully_typed(g)) && detail::merge_onnx_inference(model, opset, state))
    our_rules();
  // The file's symbols our rules found equal (ONNX's unk__1 and unk__2 for the two sides of a residual
  // sum after a strided Conv) are written as one, so that rules comparing shapes see them equal.
  if (!state.constraints.empty()) detail::canonicalize_dims(g, state.constraints);
  return std::move(state.replaced_declarations);
}

}  // namespace xexp::infer
