#pragma once
// Types and shapes through local function calls: a call's outputs are inferred by running inference
// over a copy of the function body whose formal inputs carry the call's input types, shapes and
// constants. The body itself is never annotated: one function serves calls of different shapes.
#include <algorithm>
#include <string>

#include "xexp/functions/inliner.hpp"
#include "xexp/infer/infer.hpp"
#include "xexp/infer/model.hpp"
#include "xexp/ir/copy.hpp"
#include "xexp/ir/model.hpp"

namespace xexp::functions {

// What inference through calls may still do. Each call's body is copied and inferred again, so a function
// calling another twice, forty levels deep, would be 2^40 nodes to infer; and each nested call costs
// stack. Past either bound, a call's outputs are left untyped (types are a help, not a requirement).
struct CallBudget {
  static constexpr int kMaxDepth = 64;
  int depth = 0;
  int64_t nodes_left = kDefaultMaxNodes;
};

inline void infer_graph_through_calls(ir::Graph& g, const FunctionIndex& functions, int64_t opset,
                                      infer::InferState& state, CallBudget& budget);

// Fills the output types and shapes of call node `call` of `g` from the body of `f` (nested calls
// included). Symbol equalities learned inside flow back into `state`.
inline void infer_call(ir::Graph& g, ir::NodeId call, const ir::Function& f, const FunctionIndex& functions,
                       int64_t opset, infer::InferState& state, CallBudget& budget) {
  const ir::Node& n = g.node(call);
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

  infer::InferContext context(g, call, opset, state);
  const std::size_t count = std::min(n.outputs.size(), body->outputs().size());
  for (std::size_t k = 0; k < count; ++k) {
    const ir::ValueId formal = body->outputs()[k];
    const ir::Value& out = body->value(formal);
    context.set_output(k, out.elem, out.shape);
    if (const Shape* content = body_state.value_shapes.find(formal)) context.set_value_shape(k, *content);
  }
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
