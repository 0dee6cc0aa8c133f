#pragma once
// Types and shapes through local function calls: a call's outputs are inferred by running inference
// over a copy of the function body whose formal inputs carry the call's input types, shapes and
// constants. The body itself is never annotated: one function serves calls of different shapes.
#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "xexp/functions/inliner.hpp"
#include "xexp/infer/infer.hpp"
#include "xexp/infer/model.hpp"
#include "xexp/ir/copy.hpp"
#include "xexp/ir/model.hpp"

namespace xexp::functions {

// What one call's body gave its outputs: what a second call with the same inputs gets without inferring.
struct InferredCall {
  struct Output {
    ElemType elem = ElemType::Undefined;
    std::optional<Shape> shape;
    std::optional<Shape> content;
  };
  std::vector<Output> outputs;
};

// What inference through calls may still do, and what it already did. Each call's body is copied and
// inferred, so a function calling another twice, forty levels deep, would be 2^40 bodies to infer:
// calls whose inputs are the same as an earlier call's (types, shapes, constants, tracked contents) reuse
// its outputs, which keeps such a model linear. Each nested call costs stack. Past the depth or the node
// budget, a call's outputs are left untyped (types are a help, not a requirement).
struct CallBudget {
  static constexpr int kMaxDepth = 64;
  int depth = 0;
  int64_t nodes_left = kDefaultMaxNodes;
  std::unordered_map<std::string, InferredCall> inferred;
};

namespace detail {
// The key of a call for CallBudget::inferred: the function, then each actual input's type, shape,
// tracked content and constant bytes. No key (no reuse) when a constant's bytes cannot be read.
inline std::optional<std::string> call_key(const ir::Graph& g, const ir::Node& n, const ir::Function& f,
                                           const infer::InferState& state) {
  std::string key = f.domain + '\n' + f.name;
  for (ir::ValueId in : n.inputs) {
    key += '\n';
    if (in == ir::kNone) continue;
    const ir::Value& v = g.value(in);
    key += std::to_string(static_cast<int>(v.elem)) + (v.shape ? shape_str(*v.shape) : "*");
    if (const Shape* content = state.value_shapes.find(in)) key += "=" + shape_str(*content);
    const Tensor* t = state.constant_of(g, in);
    if (!t) continue;
    if (t->storage() && !t->storage()->available()) return std::nullopt;
    key += "#" + std::to_string(static_cast<int>(t->type())) + shape_str(t->shape());
    if (t->type() == ElemType::String) {
      for (const std::string& s : t->string_data()) key += std::to_string(s.size()) + ":" + s;
    } else {
      const std::span<const std::byte> bytes = t->bytes();
      key.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    }
  }
  return key;
}
}  // namespace detail

inline void infer_graph_through_calls(ir::Graph& g, const FunctionIndex& functions, int64_t opset,
                                      infer::InferState& state, CallBudget& budget);

// Fills the output types and shapes of call node `call` of `g` from the body of `f` (nested calls
// included). Symbol equalities learned inside flow back into `state`.
inline void infer_call(ir::Graph& g, ir::NodeId call, const ir::Function& f, const FunctionIndex& functions,
                       int64_t opset, infer::InferState& state, CallBudget& budget) {
  const ir::Node& n = g.node(call);
  const std::optional<std::string> key = detail::call_key(g, n, f, state);
  auto set_outputs = [&](const InferredCall& result) {
    infer::InferContext context(g, call, opset, state);
    for (std::size_t k = 0; k < std::min(n.outputs.size(), result.outputs.size()); ++k) {
      const InferredCall::Output& out = result.outputs[k];
      context.set_output(k, out.elem, out.shape);
      if (out.content) context.set_value_shape(k, *out.content);
    }
  };
  if (key) {
    if (auto seen = budget.inferred.find(*key); seen != budget.inferred.end()) return set_outputs(seen->second);
  }
  const auto nodes = static_cast<int64_t>(f.body->node_count());
  if (budget.depth >= CallBudget::kMaxDepth || nodes > budget.nodes_left) return;
  budget.nodes_left -= nodes;
  std::unique_ptr<ir::Graph> body = ir::clone(*f.body);
  infer::InferState body_state;
  body_state.constraints = state.constraints;
  for (std::size_t i = 0; i < n.inputs.size() && i < body->inputs().size(); ++i) {
    if (n.inputs[i] == ir::kNone) continue;
    const ir::Value& actual = g.value(n.inputs[i]);
    ir::ValueId formal_id = body->inputs()[i];
    ir::Value& formal = body->value(formal_id);
    formal.elem = actual.elem;
    formal.shape = actual.shape;
    if (const Tensor* t = state.constant_of(g, n.inputs[i])) formal.initializer = *t;
    if (const Shape* content = state.value_shapes.find(n.inputs[i])) body_state.value_shapes.set(formal_id, *content);
  }
  const int64_t body_opset = ir::find_opset(f.opsets, "").value_or(opset);
  ++budget.depth;
  infer_graph_through_calls(*body, functions, body_opset, body_state, budget);
  --budget.depth;
  state.constraints = body_state.constraints;

  InferredCall result;
  for (ir::ValueId formal : body->outputs()) {
    const ir::Value& out = body->value(formal);
    const Shape* content = body_state.value_shapes.find(formal);
    result.outputs.push_back({out.elem, out.shape, content ? std::optional<Shape>(*content) : std::nullopt});
  }
  set_outputs(result);
  if (key) budget.inferred.emplace(std::move(*key), std::move(result));
}

// infer::infer_graph, going through the bodies of calls to `functions`.
inline void infer_graph_through_calls(ir::Graph& g, const FunctionIndex& functions, int64_t opset,
                                      infer::InferState& state, CallBudget& budget) {
  for (ir::NodeId id : g.nodes()) {
    if (const ir::Function* f = functions.called(g.node(id))) infer_call(g, id, *f, functions, opset, state, budget);
    else infer::infer_node(g, id, opset, state);
  }
}

// Infers the main graph of `model` (infer::infer_model_types), going through the bodies of the calls. A
// model built in memory whose functions call themselves is refused (load_model refuses such a file).
inline void infer_model(ir::Model& model) {
  xexp::detail::validate_function_calls(model);
  const FunctionIndex functions(model);
  CallBudget budget;
  infer::infer_model_types(model, [&functions, &budget](ir::Graph& g, ir::NodeId id, int64_t opset, infer::InferState& state) {
    if (const ir::Function* f = functions.called(g.node(id))) infer_call(g, id, *f, functions, opset, state, budget);
    else infer::infer_node(g, id, opset, state);
  });
}

}  // namespace xexp::functions
