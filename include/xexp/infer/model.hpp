#pragma once
// Types on load: infer_model_types gives every value of a model's main graph its element type and
// shape before anything reads them (exporters write no value_info, and most rules read shapes).
//   1. our own rules, node by node (infer_node);
//   2. where they left a type or a shape unknown, ONNX's shape inference (libonnx) over a copy of the
//      model without its weights, as the fallback for ops we have no rule for;
//   3. our rules again, so that what ONNX found flows on through the ops only we know (com.microsoft).
// Symbolic dimensions are kept and propagated. Types already in the file are kept when consistent; a
// contradiction is an xexp::Error naming the node and the value. Each step visits each node once;
// step 2 and 3 are skipped when step 1 left nothing unknown and every op has a rule of ours.
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

// <sys/mman.h> (onnx/mapped_file.hpp) defines MAP_TYPE, a name ONNX's parser.h declares.
#pragma push_macro("MAP_TYPE")
#undef MAP_TYPE
#include <onnx/shape_inference/implementation.h>
#pragma pop_macro("MAP_TYPE")

#include "xexp/infer/infer.hpp"
#include "xexp/ir/copy.hpp"
#include "xexp/ir/model.hpp"
#include "xexp/onnx/proto_fields.hpp"
#include "xexp/onnx/save.hpp"

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

// The model as ONNX's inference needs it: every typed value given as value_info, weights left out.
inline ::onnx::ModelProto proto_for_onnx_inference(const ir::Model& model) {
  ir::Model copy;
  copy.ir_version = model.ir_version;
  copy.opsets = model.opsets;
  copy.graph = ir::clone(*model.graph);
  for (const ir::Function& f : model.functions) {
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

// Step 2: what ONNX's inference finds for node outputs, merged into `model` as our own rules' results
// are. Returns whether it added anything.
inline bool merge_onnx_inference(ir::Model& model, int64_t opset, InferState& state) {
  ::onnx::ModelProto proto = proto_for_onnx_inference(model);
  if (!nodes_fit_their_schemas(proto)) return false;
  try {
    ::onnx::shape_inference::InferShapes(proto, ::onnx::OpSchemaRegistry::Instance(),
                                         ::onnx::ShapeInferenceOptions(false, 0, true));
  } catch (const std::exception& e) {
    throw_if_contradiction(*model.graph, e.what());
    return false;
  }
  ir::Graph& g = *model.graph;
  bool added = false;
  auto merge = [&](::onnx::ValueInfoProto& vi) {
    if (!vi.has_type()) return;
    const std::optional<ir::ValueId> id = g.find(vi.name());
    if (!id) return;
    const ir::Value& v = g.value(*id);
    if (v.producer == ir::kNone || !v.raw_type.empty()) return;
    ir::Value found;
    xexp::detail::read_type(vi.type(), found);
    if (!found.raw_type.empty()) return;
    const bool new_type = v.elem == ElemType::Undefined && found.elem != ElemType::Undefined;
    const bool new_shape = found.shape && (!v.shape || *v.shape != *found.shape);
    if (!new_type && !new_shape) return;
    InferContext(g, v.producer, opset, state).set_output(v.output_index, found.elem, std::move(found.shape));
    added = true;
  };
  for (auto& vi : *proto.mutable_graph()->mutable_value_info()) merge(vi);
  for (auto& vi : *proto.mutable_graph()->mutable_output()) merge(vi);
  return added;
}

}  // namespace detail

// Infers the types and shapes of the main graph of `model` (see the top of this file). `infer_one`
// replaces infer_node for step 1 and 3 (functions/infer_call.hpp passes one going through calls).
inline void infer_model_types(ir::Model& model, const NodeInference& infer_one = {}) {
  ir::Graph& g = *model.graph;
  const int64_t opset = model.opset("").value_or(0);
  InferState state;
  auto our_rules = [&] {
    for (ir::NodeId n : g.nodes()) {
      if (infer_one) infer_one(g, n, opset, state);
      else infer_node(g, n, opset, state);
    }
  };
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
  if (every_op_ours && detail::fully_typed(g)) return;
  if (detail::merge_onnx_inference(model, opset, state)) our_rules();
}

}  // namespace xexp::infer
