#pragma once
// Outlining: a set of nodes of a graph becomes a local function and one call of it. What the nodes read
// from outside becomes the function's inputs (small initializers become Constant nodes inside, so that
// equal bodies stay equal), what is read after them its outputs. Module export (module_export.hpp) and
// stage 1 of the LLM fusions (optimizer/intermediate_functions.hpp) both outline this way.
#include <algorithm>
#include <functional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "xexp/functions/inliner.hpp"
#include "xexp/ir/copy.hpp"
#include "xexp/ir/model.hpp"

namespace xexp::functions {

// Initializers smaller than this (bytes) become Constant nodes inside the bodies that read them.
inline constexpr std::size_t kDefaultConstantBytes = 256;

// What crosses the border of the nodes: values read from outside (graph values, weights, small
// constants) and values computed inside that are read outside or are graph outputs.
struct Boundary {
  std::vector<ir::ValueId> inputs, weights, constants, outputs;
};

// `inside(node)` tells whether a node is one of `nodes`; an initializer `is_weight` accepts is a weight
// whatever its size.
inline Boundary boundary_of(const ir::Graph& g, const std::vector<ir::NodeId>& nodes,
                            const std::function<bool(ir::NodeId)>& inside, std::size_t constant_bytes,
                            const std::function<bool(const ir::Value&)>& is_weight = {}) {
  Boundary io;
  std::unordered_set<ir::ValueId> seen;
  auto read = [&](ir::ValueId v) {
    if (v == ir::kNone || !seen.insert(v).second) return;
    const ir::Value& value = g.value(v);
    if (value.producer != ir::kNone && inside(value.producer)) return;
    if (!value.initializer)
      io.inputs.push_back(v);
    else if (Tensor::byte_count(value.initializer->type(), value.initializer->dims()) < constant_bytes &&
             !(is_weight && is_weight(value)))
      io.constants.push_back(v);
    else
      io.weights.push_back(v);
  };
  for (ir::NodeId id : nodes) {
    const ir::Node& n = g.node(id);
    for (ir::ValueId v : n.inputs) read(v);
    for (ir::ValueId v : n.captured) read(v);
    for (ir::ValueId v : n.outputs) {
      if (v == ir::kNone) continue;
      const ir::Value& value = g.value(v);
      const bool outside =
          value.is_graph_output() || std::any_of(value.uses.begin(), value.uses.end(),
                                                 [&](const ir::Use& u) { return !inside(u.node); });
      if (outside) io.outputs.push_back(v);
    }
  }
  // experimental-experiment passes weights by decreasing size (ties: decreasing name).
  std::sort(io.weights.begin(), io.weights.end(), [&](ir::ValueId a, ir::ValueId b) {
    const ir::Value &va = g.value(a), &vb = g.value(b);
    const int64_t sa = va.initializer->size(), sb = vb.initializer->size();
    return sa != sb ? sa > sb : va.name > vb.name;
  });
  return io;
}

// The opsets of `available` whose domains the body's nodes use, and `own_domain` at version 1 when a
// body calls functions of its own domain.
inline std::vector<ir::OpsetImport> opsets_used(const ir::Graph& body,
                                                const std::vector<ir::OpsetImport>& available,
                                                const std::string& own_domain) {
  std::unordered_set<Symbol> domains;
  for_each_node_deep(body, [&](const ir::Node& n) { domains.insert(n.domain); });
  std::vector<ir::OpsetImport> out;
  for (const ir::OpsetImport& o : available)
    if (domains.count(Symbol(o.domain == "ai.onnx" ? std::string() : o.domain))) out.push_back(o);
  if (domains.count(Symbol(own_domain)) && !ir::find_opset(out, own_domain))
    out.push_back({own_domain, 1, {}});
  return out;
}

// The function `domain.name` computing what `nodes` (in a topological order) compute, with the
// interface `io`; `available` are the opsets the graph imports.
inline ir::Function function_of(const ir::Graph& g, const std::vector<ir::NodeId>& nodes, const Boundary& io,
                                std::string name, std::string domain,
                                const std::vector<ir::OpsetImport>& available) {
  ir::Function f;
  f.name = std::move(name);
  f.domain = std::move(domain);
  ir::Graph& body = *f.body;
  ir::ValueMap map(g.value_capacity());
  for (ir::ValueId v : io.inputs) map[v] = body.add_input(g.value(v).name);
  for (ir::ValueId v : io.weights) map[v] = body.add_input(g.value(v).name);
  for (std::size_t j = 0; j < io.outputs.size(); ++j)
    map[io.outputs[j]] = body.add_value(body.unique_value_name(
        io.outputs.size() == 1 ? std::string("output") : "output_" + std::to_string(j)));
  ir::CopyPolicy policy;
  policy.value_name = [](ir::Graph& dst, const std::string& value_name) {
    return dst.unique_value_name(value_name);
  };
  std::unordered_set<ir::ValueId> constants(io.constants.begin(), io.constants.end());
  auto make_constant = [&](ir::ValueId v) {
    if (v == ir::kNone || !constants.erase(v)) return;
    const ir::Value& value = g.value(v);
    const ir::ValueId c = body.add_value(body.unique_value_name(value.name));
    body.add_node(Symbol("Constant"), {}, {c}, {ir::Attribute::make_tensor("value", *value.initializer)},
                  body.unique_node_name("init2cst"));
    map[v] = c;
  };
  for (ir::NodeId id : nodes) {
    const ir::Node& n = g.node(id);
    for (ir::ValueId v : n.inputs) make_constant(v);
    for (ir::ValueId v : n.captured) make_constant(v);
    ir::copy_node(g, id, body, map, ir::kNone, policy);
  }
  for (ir::ValueId v : io.outputs) body.add_output(*map[v]);
  // A function is shape-polymorphic: the types seen at this call site do not belong to its body.
  for (ir::ValueId v = 0; v < body.value_capacity(); ++v) {
    body.value(v).elem = ElemType::Undefined;
    body.value(v).shape.reset();
  }
  f.opsets = opsets_used(body, available, f.domain);
  return f;
}

// Replaces `nodes` by one call of `domain.name` reading io.inputs then io.weights and writing
// io.outputs (which keep their names and types), placed before `before`.
inline ir::NodeId replace_by_call(ir::Graph& g, const std::vector<ir::NodeId>& nodes, const Boundary& io,
                                  const std::string& name, const std::string& domain,
                                  const std::string& node_name, ir::NodeId before) {
  for (ir::NodeId id : nodes) g.remove_node(id);
  for (ir::ValueId v : io.outputs) g.value(v).alive = true;
  std::vector<ir::ValueId> inputs = io.inputs;
  inputs.insert(inputs.end(), io.weights.begin(), io.weights.end());
  return g.add_node(Symbol(name), std::move(inputs), io.outputs, {}, g.unique_node_name(node_name),
                    Symbol(domain), before);
}

}  // namespace xexp::functions
