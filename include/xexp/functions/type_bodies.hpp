#pragma once
// Function bodies carry no types in ONNX, yet most rewrite rules need them (ranks, static dims). Before
// a model's functions are optimized one by one, each body receives the input types and shapes that all
// of its calls in this model agree on, and is inferred through; a formal input whose calls disagree
// stays unknown, so what the rules then do to the body holds for every call. Callers are typed before
// their callees: the main graph first, then the functions from the last registered to the first
// (a function is registered after the functions it calls). Nothing of this is saved: FunctionProto has
// no place for it.
#include <optional>
#include <vector>

#include "xexp/functions/infer_call.hpp"

namespace xexp::functions {

namespace detail {
// What the calls seen so far agree on for one formal input.
struct AgreedType {
  bool seen = false;
  ElemType elem = ElemType::Undefined;
  std::optional<Shape> shape;

  void meet(const ir::Value& actual) {
    if (!seen) {
      seen = true;
      elem = actual.elem;
      shape = actual.shape;
      return;
    }
    if (elem != actual.elem) elem = ElemType::Undefined;
    if (shape != actual.shape) shape.reset();
  }
};
}  // namespace detail

inline void type_function_bodies(ir::Model& model) {
  infer_model(model);
  const FunctionIndex index(model);
  std::vector<std::vector<detail::AgreedType>> agreed(model.functions.size());
  for (std::size_t k = 0; k < model.functions.size(); ++k) agreed[k].resize(model.functions[k].body->inputs().size());
  auto index_of = [&](const ir::Function* f) { return static_cast<std::size_t>(f - model.functions.data()); };
  auto collect_calls = [&](const ir::Graph& g) {
    for (ir::NodeId id : g.nodes()) {
      const ir::Node& n = g.node(id);
      const ir::Function* f = index.called(n);
      if (!f) continue;
      std::vector<detail::AgreedType>& types = agreed[index_of(f)];
      for (std::size_t i = 0; i < n.inputs.size() && i < types.size(); ++i)
        if (n.inputs[i] != ir::kNone) types[i].meet(g.value(n.inputs[i]));
    }
  };
  collect_calls(*model.graph);
  CallBudget budget;
  for (std::size_t k = model.functions.size(); k-- > 0;) {
    ir::Function& f = model.functions[k];
    ir::Graph& body = *f.body;
    for (std::size_t i = 0; i < body.inputs().size(); ++i) {
      ir::Value& formal = body.value(body.inputs()[i]);
      if (formal.elem == ElemType::Undefined) formal.elem = agreed[k][i].elem;
      if (!formal.shape) formal.shape = agreed[k][i].shape;
    }
    infer::InferState state;
    infer_graph_through_calls(body, index, ir::find_opset(f.opsets, "").value_or(model.opset("").value_or(0)), state, budget);
    collect_calls(body);
  }
}

}  // namespace xexp::functions
