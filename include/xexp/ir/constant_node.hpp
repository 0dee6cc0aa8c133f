#pragma once
// ONNX's Constant operator holds its tensor in one of several attributes: `value` (a tensor), or the
// shorthands value_float(s), value_int(s), value_string(s). Readers of constants (rules, folding,
// inference) look only at `value`, so the shorthands are first rewritten to it; in the main graph a
// Constant node becomes an initializer (what ONNX Runtime's loader does too), which every reader
// already knows. Function bodies keep their Constant nodes: a FunctionProto has no initializers.
#include <cstddef>
#include <optional>
#include <vector>

#include "xexp/core/tensor.hpp"
#include "xexp/ir/graph.hpp"

namespace xexp::ir {

inline bool is_constant_node(const Node& n) { return n.domain.empty() && n.op_type.view() == "Constant"; }

// The tensor a Constant node with these attributes produces; nullopt for sparse_value, for a value
// taken from the calling node (ref_attr_name, inside function bodies) and for a malformed node.
inline std::optional<Tensor> constant_attribute_value(const std::vector<Attribute>& attributes) {
  if (attributes.size() != 1 || !attributes[0].ref_attr_name.empty()) return std::nullopt;
  const Attribute& a = attributes[0];
  const std::string_view name = a.name.view();
  const auto count = [](const auto& v) { return std::vector<int64_t>{static_cast<int64_t>(v.size())}; };
  if (name == "value" && a.type == AttrType::Tensor && !a.tensors.empty()) return a.tensor();
  if (name == "value_float" && a.type == AttrType::Float) return Tensor::scalar<float>(a.f);
  if (name == "value_floats" && a.type == AttrType::Floats) return Tensor::from<float>(count(a.floats), a.floats);
  if (name == "value_int" && a.type == AttrType::Int) return Tensor::scalar<int64_t>(a.i);
  if (name == "value_ints" && a.type == AttrType::Ints) return Tensor::from<int64_t>(count(a.ints), a.ints);
  if (name == "value_string" && a.type == AttrType::String) return Tensor::strings({}, {a.s});
  if (name == "value_strings" && a.type == AttrType::Strings) return Tensor::strings(count(a.strings), a.strings);
  return std::nullopt;
}

// Rewrites the shorthand attributes of the graph's Constant nodes (value_ints, ...) as `value`;
// returns how many nodes changed. Subgraphs are left as they are.
inline std::size_t constant_shorthands_to_value(Graph& g) {
  static const Symbol value_name("value");
  std::size_t changed = 0;
  for (NodeId id : g.nodes()) {
    Node& n = g.node(id);
    if (!is_constant_node(n) || n.attributes.size() != 1 || n.attributes[0].name == value_name) continue;
    if (std::optional<Tensor> t = constant_attribute_value(n.attributes)) {
      n.attributes = {Attribute::make_tensor(value_name, std::move(*t))};
      ++changed;
    }
  }
  return changed;
}

// Turns each Constant node of `g` into an initializer of the same name, appended to the initializer
// order; returns how many nodes went. A Constant nothing reads is dropped. Kept as nodes: a Constant
// whose output is a graph output (an initializer listed as an output is not accepted by every runtime)
// and those constant_attribute_value cannot read.
inline std::size_t constant_nodes_to_initializers(Graph& g) {
  std::vector<NodeId> constants;
  for (NodeId id : g.nodes()) {
    const Node& n = g.node(id);
    if (is_constant_node(n) && n.outputs.size() == 1 && n.outputs[0] != kNone && !g.value(n.outputs[0]).is_graph_output())
      constants.push_back(id);
  }
  std::vector<ValueId> added;
  std::size_t removed = 0;
  for (NodeId id : constants) {
    std::optional<Tensor> t = constant_attribute_value(g.node(id).attributes);
    if (!t) continue;
    const ValueId out = g.node(id).outputs[0];
    g.remove_node(id);
    ++removed;  // an output nothing reads is marked dead here
    Value& v = g.value(out);
    if (!v.alive) continue;
    v.elem = t->type();
    v.shape = t->shape();
    v.initializer = std::move(*t);
    added.push_back(out);
  }
  if (!added.empty()) {
    std::vector<ValueId> order = g.initializers();
    order.insert(order.end(), added.begin(), added.end());
    g.set_initializer_order(std::move(order));
  }
  return removed;
}

// The reverse, for a function body (a FunctionProto has no initializers, yet a rule may add one, such
// as a LayerNormalization's scale of ones): each dense initializer of `g` becomes a Constant node of the
// same name at the start of the graph. Returns how many.
inline std::size_t initializers_to_constant_nodes(Graph& g) {
  static const Symbol constant_op("Constant"), value_name("value");
  std::vector<ValueId> sparse;
  const NodeId first = g.first_node();
  std::size_t moved = 0;
  for (ValueId id : g.initializers()) {
    Value& v = g.value(id);
    if (!v.initializer) {
      sparse.push_back(id);
      continue;
    }
    Attribute value = Attribute::make_tensor(value_name, std::move(*v.initializer));
    v.initializer.reset();
    g.add_node(constant_op, {}, {id}, {std::move(value)}, g.unique_node_name("init2cst"), {}, first);
    ++moved;
  }
  g.set_initializer_order(std::move(sparse));
  return moved;
}

}  // namespace xexp::ir
