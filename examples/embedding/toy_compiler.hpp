#pragma once
// Embedding xexp in another compiler: the compiler's own graph goes in as an xexp::ir::Model, xexp's
// rule sets run on it, and the result comes back in the compiler's terms, each new op saying which rule
// made it. toy::Graph stands for the host compiler's representation: float32 and int64 tensors, ops by
// name.
#include <xexp/all.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace toy {

struct Tensor {
  std::string name;
  std::vector<int64_t> dims;
  std::vector<double> values;  // empty for a graph input
  bool int64 = false;          // float32 otherwise
};

struct Op {
  std::string type, domain;  // domain "" is ONNX's default domain
  std::vector<std::string> inputs, outputs;
  std::map<std::string, int64_t> ints = {};  // attributes
  std::map<std::string, float> floats = {};
  std::string made_by = {};  // the xexp rule that created the op, when one did
};

struct Graph {
  std::vector<Tensor> inputs, weights;
  std::vector<Op> ops;  // in execution order
  std::vector<std::string> outputs;
};

// Toy graph -> xexp: inputs, initializers, then nodes reading values by name.
inline xexp::ir::Model to_xexp(const Graph& toy) {
  xexp::ir::Model model;
  model.opsets.push_back({"", 18, {}});
  xexp::ir::Graph& g = *model.graph;
  for (const Tensor& t : toy.inputs)
    g.add_input(t.name, t.int64 ? xexp::ElemType::Int64 : xexp::ElemType::Float, xexp::make_shape(t.dims));
  for (const Tensor& t : toy.weights)
    g.add_initializer(t.name, t.int64 ? xexp::Tensor::from<int64_t>(t.dims, {t.values.begin(), t.values.end()})
                                      : xexp::Tensor::from<float>(t.dims, {t.values.begin(), t.values.end()}));
  for (const Op& op : toy.ops) {
    std::vector<xexp::ir::ValueId> inputs, outputs;
    for (const std::string& name : op.inputs) inputs.push_back(g.at(name));
    for (const std::string& name : op.outputs) outputs.push_back(g.add_value(name));
    std::vector<xexp::ir::Attribute> attributes;
    for (const auto& [name, value] : op.ints) attributes.push_back(xexp::ir::Attribute::make_int(xexp::Symbol(name), value));
    for (const auto& [name, value] : op.floats)
      attributes.push_back(xexp::ir::Attribute::make_float(xexp::Symbol(name), value));
    g.add_node(xexp::Symbol(op.type), inputs, outputs, attributes, op.outputs[0], xexp::Symbol(op.domain));
  }
  for (const std::string& name : toy.outputs) g.add_output(g.at(name));
  return model;
}

// xexp -> toy graph: the nodes in execution order, the initializers the rules left or made. What the toy
// IR cannot hold (other attribute types, subgraphs) is refused.
inline Graph from_xexp(const xexp::ir::Model& model, const Graph& original) {
  const xexp::ir::Graph& g = *model.graph;
  Graph toy;
  toy.inputs = original.inputs;
  for (xexp::ir::ValueId id : g.initializers()) {
    const xexp::Tensor& t = *g.value(id).initializer;
    toy.weights.push_back({g.value(id).name, t.dims(), xexp::eval::as_doubles(t), t.type() == xexp::ElemType::Int64});
  }
  for (xexp::ir::NodeId id : g.nodes()) {
    const xexp::ir::Node& n = g.node(id);
    Op op{.type = n.op_type.str(), .domain = n.domain.str(), .inputs = {}, .outputs = {},
          .made_by = std::string(xexp::rewrite::rule_of_node_name(n.name))};
    for (xexp::ir::ValueId in : n.inputs) op.inputs.push_back(in == xexp::ir::kNone ? "" : g.value(in).name);
    for (xexp::ir::ValueId out : n.outputs) op.outputs.push_back(out == xexp::ir::kNone ? "" : g.value(out).name);
    for (const xexp::ir::Attribute& a : n.attributes) {
      if (a.type == xexp::ir::AttrType::Int) op.ints[a.name.str()] = a.i;
      else if (a.type == xexp::ir::AttrType::Float) op.floats[a.name.str()] = a.f;
      else throw xexp::Error("the toy IR has no attribute of this type", {.node = n.name, .value = a.name.str()});
    }
    toy.ops.push_back(std::move(op));
  }
  toy.outputs = original.outputs;  // the optimizer keeps the names of graph inputs and outputs
  return toy;
}

struct Optimized {
  Graph graph;
  xexp::optimizer::OptimizeModelReport report;  // nodes before and after, what each rule did
};

// Runs xexp's optimizer (constant folding and the rules of `patterns`, e.g. "default+onnxruntime") on
// a toy graph. Throws xexp::Error (node, value and cause) when the graph is not valid ONNX.
inline Optimized optimize(const Graph& toy, const std::string& patterns) {
  xexp::ir::Model model = to_xexp(toy);
  xexp::optimizer::OptimizeModelOptions options;
  options.patterns = patterns;
  xexp::optimizer::OptimizeModelReport report = xexp::optimizer::optimize_model(model, options);
  return {from_xexp(model, toy), std::move(report)};
}

}  // namespace toy
