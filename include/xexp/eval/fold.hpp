#pragma once
// Constant folding: a node of a foldable op whose inputs are all constant (initializers, Constant node
// outputs, or results folded earlier in the same pass) is evaluated and becomes an initializer holding
// its result under its output name, so graph outputs and consumers keep their names. Shape of a value
// with a static shape becomes a constant whatever the value. Foldable: every op of the default domain
// the evaluator has a kernel for (none of them is random), except DequantizeLinear, left to the
// runtime's quantized kernels as ONNX Runtime's own folding leaves it.
#include <algorithm>
#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "xexp/core/element_cap.hpp"
#include "xexp/eval/evaluate_op.hpp"
#include "xexp/ir/graph.hpp"
#include "xexp/ir/model.hpp"
#include "xexp/core/slice_range.hpp"

namespace xexp::eval {

struct FoldOptions {
  // When not empty, only these ops of the default domain are folded.
  std::unordered_set<std::string> ops;
  // A node is folded only when each of its outputs has at most this many elements (what folding
  // creates is stored in the model: an Expand or ConstantOfShape may stay cheaper than its result).
  int64_t max_elements = int64_t{1} << 20;
  // Shape(X) becomes a constant when X has a static shape.
  bool fold_static_shape = true;
  // The default-domain opset the nodes are read with (how attributes such as axes are given).
  int64_t opset = 18;
  // Whether a node computing a graph output may fold. Off for subgraphs: a body's output that is one of
  // its initializers is not accepted by every runtime.
  bool fold_graph_outputs = true;
};

namespace detail {

// The tensor held by a constant value: an initializer (not an overridable input, nor one whose external
// data file is missing) or a Constant output, in an enclosing graph for a value a subgraph reads there.
inline std::optional<Tensor> constant_value(const ir::Graph& graph, ir::ValueId id, int64_t opset) {
  const auto [defining, defined] = ir::definition_of(graph, id);
  const ir::Graph& g = *defining;
  const ir::Value& v = g.value(defined);
  if (v.initializer && !v.is_input) return v.initializer->available() ? v.initializer : std::nullopt;
  if (v.producer == ir::kNone) return std::nullopt;
  const ir::Node& n = g.node(v.producer);
  if (!n.domain.empty() || n.op_type.view() != "Constant") return std::nullopt;
  try {
    return evaluate_op(n.op_type, n.domain, {}, n.attributes, opset, 1)[0];
  } catch (const Error&) {
    return std::nullopt;  // sparse_value and the like: left alone
  }
}

inline bool foldable_op(const ir::Node& n, const FoldOptions& options) {
  static const Symbol dequantize("DequantizeLinear");
  if (!options.ops.empty()) return options.ops.count(n.op_type.str()) > 0;
  return n.op_type != dequantize && is_supported_op(n.op_type, n.domain);
}

// Ops whose output has exactly as many elements as their first input.
inline bool keeps_element_count(const ir::Node& n) {
  static const Symbol ops[] = {"Cast", "CastLike", "Flatten", "Identity", "Reshape", "Squeeze", "Transpose", "Unsqueeze"};
  return std::find(std::begin(ops), std::end(ops), n.op_type) != std::end(ops);
}

// Whether an output is already known to exceed the size cap (spares evaluating it). Before types are
// inferred, an output of unknown shape is still known too large when it holds every element of a
// constant over the cap (Transpose of an lm_head weight: evaluating it would cost its size for nothing).
inline bool known_too_large(const ir::Graph& g, const ir::Node& n, const FoldOptions& options) {
  if (keeps_element_count(n) && !n.inputs.empty() && n.inputs[0] != ir::kNone) {
    const auto [defining, defined] = ir::definition_of(g, n.inputs[0]);
    const ir::Value& data = defining->value(defined);
    if (data.initializer && data.initializer->size() > options.max_elements) return true;
  }
  for (ir::ValueId out : n.outputs) {
    if (out == ir::kNone || !g.value(out).shape) continue;
    const Shape& shape = *g.value(out).shape;
    if (!std::all_of(shape.begin(), shape.end(), [](const Dim& d) { return d.is_static(); })) continue;
    int64_t count = 1;
    for (const Dim& d : shape)
      if (__builtin_mul_overflow(count, d.value(), &count)) return true;
    if (count > options.max_elements) return true;
  }
  return false;
}

// Shape(X)[start:end] when X's shape is static there.
inline std::optional<Tensor> static_shape_of(const ir::Graph& g, const ir::Node& n) {
  if (n.inputs.empty() || n.inputs[0] == ir::kNone) return std::nullopt;
  const ir::Value& x = g.value(n.inputs[0]);
  if (!x.shape) return std::nullopt;
  const auto r = static_cast<int64_t>(x.shape->size());
  const ir::Attribute* s = n.attribute(Symbol("start"));
  const ir::Attribute* e = n.attribute(Symbol("end"));
  const auto [start, end] = shape_range(r, s ? s->i : 0, e ? e->i : r);
  std::vector<int64_t> dims;
  for (int64_t d = start; d < end; ++d) {
    if (!(*x.shape)[d].is_static()) return std::nullopt;
    dims.push_back((*x.shape)[d].value());
  }
  return Tensor::from<int64_t>({static_cast<int64_t>(dims.size())}, dims);
}

}  // namespace detail

// Folds node `nid` when its op is foldable and its inputs are constant: the node is removed and its
// outputs become initializers under their own names, appended to `new_initializers` (the caller puts
// them in the graph's initializer order, once for a whole pass). Returns whether it folded.
inline bool fold_node(ir::Graph& g, ir::NodeId nid, const FoldOptions& options,
                      std::vector<ir::ValueId>& new_initializers) {
  const ir::Node& n = g.node(nid);
  if (!n.alive || !n.domain.empty() || n.has_subgraphs() || n.op_type.view() == "Constant") return false;
  if (!options.fold_graph_outputs && std::any_of(n.outputs.begin(), n.outputs.end(), [&](ir::ValueId out) {
        return out != ir::kNone && g.value(out).is_graph_output();
      }))
    return false;
  std::vector<Tensor> results;
  if (options.fold_static_shape && n.op_type.view() == "Shape") {
    if (auto t = detail::static_shape_of(g, n)) results.push_back(std::move(*t));
  }
  if (results.empty() && detail::foldable_op(n, options) && !detail::known_too_large(g, n, options)) {
    std::vector<std::optional<Tensor>> inputs;
    for (ir::ValueId in : n.inputs) {
      if (in == ir::kNone) {
        inputs.emplace_back();
        continue;
      }
      inputs.push_back(detail::constant_value(g, in, options.opset));
      if (!inputs.back()) return false;
    }
    try {
      const ElementCap cap(options.max_elements);  // a result of unknown shape gives up before it allocates
      results = evaluate_op(n.op_type, n.domain, inputs, n.attributes, options.opset, n.outputs.size());
    } catch (const Error&) {
      return false;  // not foldable (bad input, unsupported case): the runtime will report it
    }
  }
  if (results.empty()) return false;
  for (const Tensor& t : results)
    if (t.size() > options.max_elements) return false;
  const std::vector<ir::ValueId> outputs = n.outputs;
  g.remove_node(nid);
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    if (outputs[k] == ir::kNone) continue;
    ir::Value& v = g.value(outputs[k]);
    v.alive = true;
    v.elem = results[k].type();
    v.shape = results[k].shape();
    v.initializer = std::move(results[k]);
    new_initializers.push_back(outputs[k]);
  }
  return true;
}

// Appends values that just became initializers (fold_node's `new_initializers`) to the graph's order.
inline void append_initializers(ir::Graph& g, const std::vector<ir::ValueId>& new_initializers) {
  if (new_initializers.empty()) return;
  std::vector<ir::ValueId> order = g.initializers();
  order.insert(order.end(), new_initializers.begin(), new_initializers.end());
  g.set_initializer_order(std::move(order));
}

// Folds what it can in one pass over the graph (in order, so chains fold entirely); returns the
// number of folded nodes. Constant nodes left without consumers are removed too (not counted).
inline std::size_t fold_constants(ir::Graph& g, const FoldOptions& options = {}) {
  std::size_t folded = 0;
  std::vector<ir::ValueId> new_initializers;
  std::vector<ir::NodeId> constant_nodes;
  for (ir::NodeId nid : g.nodes()) {
    const ir::Node& n = g.node(nid);
    if (n.domain.empty() && n.op_type.view() == "Constant") constant_nodes.push_back(nid);
    else if (fold_node(g, nid, options, new_initializers)) ++folded;
  }
  for (ir::NodeId nid : constant_nodes)
    if (!g.any_output_read(nid)) g.remove_node(nid);
  append_initializers(g, new_initializers);
  return folded;
}

// Same, reading the opset from the model.
inline std::size_t fold_constants(ir::Model& model, FoldOptions options = {}) {
  if (auto v = model.opset("")) options.opset = *v;
  return fold_constants(*model.graph, options);
}

}  // namespace xexp::eval
