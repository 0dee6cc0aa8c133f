#pragma once
// What inference carries from one node to the next beyond types and shapes: the content of small
// integer tensors that hold shapes (Shape(X) -> ["batch", 3]), the symbolic equalities learned so far,
// and how to read a constant tensor.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "xexp/core/shape.hpp"
#include "xexp/core/tensor.hpp"
#include "xexp/ir/graph.hpp"
#include "xexp/infer/shape_constraints.hpp"

namespace xexp::infer {

// The elements of a 0-D or 1-D integer tensor seen as dimensions ("shape values"). A Dim cannot be
// negative, yet shapes given to Reshape hold -1: a negative element is kept as the symbol spelling
// its value ("-1"), a name no dimension symbol can have.
inline Dim content_dim(int64_t v) { return v >= 0 ? Dim(v) : Dim::symbolic(std::to_string(v)); }
inline std::optional<int64_t> content_int(const Dim& d) {
  if (d.is_static()) return d.value();
  if (!d.is_symbolic()) return std::nullopt;
  std::string_view s = d.symbol().view();
  if (s.size() < 2 || s[0] != '-' || s.find_first_not_of("0123456789", 1) != std::string_view::npos)
    return std::nullopt;
  return std::stoll(std::string(s));
}
inline Shape content_of(const std::vector<int64_t>& values) {
  Shape out;
  out.reserve(values.size());
  for (int64_t v : values) out.push_back(content_dim(v));
  return out;
}
inline std::optional<std::vector<int64_t>> content_ints(const Shape& content) {
  std::vector<int64_t> out;
  out.reserve(content.size());
  for (const Dim& d : content) {
    auto v = content_int(d);
    if (!v) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

// Constants longer than this are data, not shapes: their content is not tracked.
inline constexpr int64_t kMaxShapeContent = 64;

// The values of a 0-D or 1-D int64/int32 tensor; booleans as 0 and 1 (Where reads a condition so).
inline std::optional<std::vector<int64_t>> tensor_ints(const Tensor& t) {
  if (t.rank() > 1) return std::nullopt;
  if (t.type() == ElemType::Bool) {
    auto d = t.data<bool>();
    return std::vector<int64_t>(d.begin(), d.end());
  }
  if (t.type() == ElemType::Int64) {
    auto d = t.data<int64_t>();
    return std::vector<int64_t>(d.begin(), d.end());
  }
  if (t.type() == ElemType::Int32) {
    auto d = t.data<int32_t>();
    return std::vector<int64_t>(d.begin(), d.end());
  }
  return std::nullopt;
}

// ValueId -> the content of a shape value (a scalar holds one element).
class ValueShapes {
 public:
  const Shape* find(ir::ValueId id) const {
    auto it = map_.find(id);
    return it == map_.end() ? nullptr : &it->second;
  }
  void set(ir::ValueId id, Shape content) { map_[id] = std::move(content); }
  void erase(ir::ValueId id) { map_.erase(id); }
  void clear() { map_.clear(); }
  std::size_t size() const noexcept { return map_.size(); }
  const std::unordered_map<ir::ValueId, Shape>& map() const noexcept { return map_; }

 private:
  std::unordered_map<ir::ValueId, Shape> map_;
};

// The tensor held by a value when it is an initializer or the output of a Constant node with a
// `value` attribute (in an enclosing graph for a value a subgraph reads from there); nullptr otherwise.
inline const Tensor* graph_constant(const ir::Graph& graph, ir::ValueId id) {
  const auto [defining, defined] = ir::definition_of(graph, id);
  const ir::Graph& g = *defining;
  const ir::Value& v = g.value(defined);
  if (v.initializer) return &*v.initializer;
  if (v.producer == ir::kNone) return nullptr;
  const ir::Node& n = g.node(v.producer);
  if (n.op_type.view() != "Constant" || !n.domain.empty()) return nullptr;
  const ir::Attribute* a = n.attribute("value");
  return a && a->type == ir::AttrType::Tensor && !a->tensors.empty() ? &a->tensor() : nullptr;
}

struct InferState {
  ValueShapes value_shapes;
  ShapeConstraints constraints;
  // Reads a constant tensor; empty means graph_constant. The builder plugs in its own (it also knows
  // constants folded by the evaluator).
  std::function<const Tensor*(const ir::Graph&, ir::ValueId)> constant;
  // Types on load (infer_model_types): a node output's shape already known gives way to the one its
  // node computes. Exporters declare some wrong (a SoftmaxCrossEntropyLoss with reduction 'mean'
  // declared as its scores' shape), and ONNX Runtime keeps what the node computes with a warning; the
  // values computed from such a declaration before it was replaced give way too. Element types and
  // nodes that contradict their inputs are still errors.
  bool node_shapes_win = false;
  // The node outputs whose shape the file declared, by ValueId: a replaced one is reported.
  std::vector<bool> declared_shapes;
  // One line per declaration that gave way: "value 'loss': declared (6,10), node 'sce' computes ()".
  std::vector<std::string> replaced_declarations;

  const Tensor* constant_of(const ir::Graph& g, ir::ValueId id) const {
    return constant ? constant(g, id) : graph_constant(g, id);
  }
  bool shape_declared(ir::ValueId id) const { return id < declared_shapes.size() && declared_shapes[id]; }
};

}  // namespace xexp::infer
