#pragma once
// InferContext: what a shape rule sees of one node. Reading helpers (input types, shapes, constant
// integers, attributes) and one writing path, set_output, which merges with what is already known.
//
// Conflict policy: inference never silently overwrites. An output type or shape already known is kept;
// inferred facts only fill its unknown dimensions, bind its symbols (symbol vs static) or record
// symbol equalities (symbol vs symbol). A contradiction (different element types, ranks, or static
// sizes) throws xexp::Error naming the node and the value: it means the graph is wrong. One exception:
// on load, a shape already known gives way to what the node computes (InferState::node_shapes_win).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "xexp/core/error.hpp"
#include "xexp/core/shape.hpp"
#include "xexp/core/tensor.hpp"
#include "xexp/ir/graph.hpp"
#include "xexp/onnx/schema.hpp"
#include "xexp/infer/broadcast.hpp"
#include "xexp/infer/state.hpp"

namespace xexp::infer {

class InferContext {
 public:
  InferContext(ir::Graph& g, ir::NodeId n, int64_t opset, InferState& state)
      : g_(g), node_(g.node(n)), opset_(opset), state_(state) {}

  const ir::Node& node() const noexcept { return node_; }
  int64_t opset() const noexcept { return opset_; }
  ShapeConstraints& constraints() noexcept { return state_.constraints; }

  // ---- inputs ---------------------------------------------------------------------------------
  std::size_t input_count() const noexcept { return node_.inputs.size(); }
  bool has_input(std::size_t i) const noexcept { return i < node_.inputs.size() && node_.inputs[i] != ir::kNone; }
  ElemType type(std::size_t i) const { return has_input(i) ? input(i).elem : ElemType::Undefined; }
  const std::optional<Shape>& shape(std::size_t i) const {
    static const std::optional<Shape> none;
    return has_input(i) ? input(i).shape : none;
  }
  // For error messages: the name of input i ("" when absent).
  std::string input_name(std::size_t i) const { return has_input(i) ? input(i).name : std::string(); }
  std::optional<std::size_t> rank(std::size_t i) const { return has_input(i) ? input(i).rank() : std::nullopt; }
  // The type of the first input whose type is known (ops whose inputs share one type).
  ElemType first_known_type(std::size_t first = 0) const {
    for (std::size_t i = first; i < input_count(); ++i)
      if (type(i) != ElemType::Undefined) return type(i);
    return ElemType::Undefined;
  }
  // True when every listed present input has a known shape.
  bool shapes_known(std::size_t first, std::size_t last) const {
    for (std::size_t i = first; i < last && i < input_count(); ++i)
      if (has_input(i) && !shape(i)) return false;
    return true;
  }
  const Tensor* constant(std::size_t i) const {
    return has_input(i) ? state_.constant_of(g_, node_.inputs[i]) : nullptr;
  }
  // The elements of an integer input as dimensions: tracked content (Shape(X) ...) or a constant.
  std::optional<Shape> value_shape(std::size_t i) const {
    if (!has_input(i)) return std::nullopt;
    if (const Shape* s = state_.value_shapes.find(node_.inputs[i])) return *s;
    if (auto v = constant_ints(i)) return content_of(*v);
    return std::nullopt;
  }
  // The content of an integer value cast to input i's float type (Cast(Shape(X)[k], to=float), as
  // exporters write Range's limit for float position ids). Content is tracked for integers only, so that
  // float arithmetic never reads it; a reader of this one takes it as counts, exact below 2^24 for float.
  std::optional<Shape> value_shape_before_cast(std::size_t i) const {
    if (!has_input(i) || !is_float(type(i))) return std::nullopt;
    const ir::NodeId producer = input(i).producer;
    if (producer == ir::kNone) return std::nullopt;
    const ir::Node& cast = g_.node(producer);
    if (cast.op_type != Symbol("Cast") || !cast.domain.empty() || cast.inputs.empty()) return std::nullopt;
    const ir::ValueId source = cast.inputs[0];
    if (!is_integer(g_.value(source).elem)) return std::nullopt;
    if (const Shape* s = state_.value_shapes.find(source)) return *s;
    return std::nullopt;
  }
  // The elements of an integer input when all are known (constant, or a tracked static content).
  std::optional<std::vector<int64_t>> ints(std::size_t i) const {
    if (auto v = constant_ints(i)) return v;
    if (!has_input(i)) return std::nullopt;
    if (const Shape* s = state_.value_shapes.find(node_.inputs[i])) return content_ints(*s);
    return std::nullopt;
  }

  // ---- attributes -------------------------------------------------------------------------------
  // Compared by text: interning `name` would take the symbol table's lock on every call.
  const ir::Attribute* attr(std::string_view name) const {
    for (const ir::Attribute& a : node_.attributes)
      if (a.name.view() == name) return &a;
    return nullptr;
  }
  int64_t attr_int(std::string_view name, int64_t fallback) const {
    const ir::Attribute* a = attr(name);
    return a && a->type == ir::AttrType::Int ? a->i : fallback;
  }
  float attr_float(std::string_view name, float fallback) const {
    const ir::Attribute* a = attr(name);
    return a && a->type == ir::AttrType::Float ? a->f : fallback;
  }
  std::string_view attr_string(std::string_view name, std::string_view fallback) const {
    const ir::Attribute* a = attr(name);
    return a && a->type == ir::AttrType::String ? std::string_view(a->s) : fallback;
  }
  std::optional<std::vector<int64_t>> attr_ints(std::string_view name) const {
    const ir::Attribute* a = attr(name);
    if (!a || a->type != ir::AttrType::Ints) return std::nullopt;
    return a->ints;
  }
  // Squeeze/Unsqueeze/Reduce* axes and Split's split became inputs (onnx/schema.hpp): their values
  // read where the node's opset puts them; nullopt when absent or not constant.
  std::optional<std::vector<int64_t>> moved_ints() const {
    const AttributeBecameInput* m = moved();
    if (!m) return std::nullopt;
    return opset_ < m->since ? attr_ints(m->attribute) : ints(static_cast<std::size_t>(m->input_index));
  }
  bool moved_given() const {
    const AttributeBecameInput* m = moved();
    if (!m) return false;
    return opset_ < m->since ? attr(m->attribute) != nullptr : has_input(static_cast<std::size_t>(m->input_index));
  }

  // ---- outputs --------------------------------------------------------------------------------
  std::size_t output_count() const noexcept { return node_.outputs.size(); }
  bool has_output(std::size_t k) const noexcept { return k < node_.outputs.size() && node_.outputs[k] != ir::kNone; }

  // Records what is deduced for output k (Undefined / nullopt: nothing deduced); see the policy above.
  void set_output(std::size_t k, ElemType type, std::optional<Shape> shape = std::nullopt) {
    if (!has_output(k)) return;
    ir::Value& v = g_.value(node_.outputs[k]);
    if (type != ElemType::Undefined) {
      if (v.elem == ElemType::Undefined) v.elem = type;
      else if (v.elem != type)
        fail("inferred type " + std::string(elem_type_name(type)) + " but it is already " +
                 std::string(elem_type_name(v.elem)),
             v.name);
    }
    if (!shape) return;
    for (Dim& d : *shape) d = constraints().canonical(d);
    if (!v.shape) {
      v.shape = std::move(shape);
      return;
    }
    try {
      constraints().merge(*v.shape, *shape);
    } catch (const Error& e) {
      if (state_.node_shapes_win) {
        if (state_.shape_declared(node_.outputs[k]))
          state_.replaced_declarations.push_back("value '" + v.name + "': declared " + shape_str(*v.shape) +
                                                 ", node '" + node_.name + "' computes " + shape_str(*shape));
        v.shape = std::move(shape);
        return;
      }
      fail("inferred shape " + shape_str(*shape) + " but it is already " + shape_str(*v.shape) + ": " + e.cause(), v.name);
    }
  }
  // A dimension no input determines (NonZero's count of elements): a symbol named after output k,
  // so that inferring the node again gives the same symbol.
  Dim fresh_dim(std::size_t k, std::string_view what) const {
    if (!has_output(k)) return {};
    return Dim::symbolic(std::string(what) + "_" + g_.value(node_.outputs[k]).name);
  }
  // Output k is a tensor of known rank and unknown dimensions.
  void set_output_rank(std::size_t k, ElemType type, std::size_t rank) { set_output(k, type, Shape(rank)); }
  // Output k holds these dimensions as values (Shape, Gather of a shape, ...).
  void set_value_shape(std::size_t k, Shape content) {
    if (!has_output(k)) return;
    for (Dim& d : content)
      if (!content_int(d)) d = constraints().canonical(d);
    state_.value_shapes.set(node_.outputs[k], std::move(content));
  }

  Shape broadcast(const Shape& a, const Shape& b) {
    try {
      return broadcast_shapes(a, b, constraints());
    } catch (const Error& e) {
      fail(e.cause());
    }
  }
  // Two dimensions that must be equal (MatMul's inner dimension, Concat's other axes).
  Dim unify(const Dim& a, const Dim& b) {
    try {
      return constraints().unify(a, b);
    } catch (const Error& e) {
      fail(e.cause());
    }
  }
  // axis in [-rank, rank) -> [0, rank).
  std::size_t normalize_axis(int64_t axis, std::size_t rank) const {
    const auto r = static_cast<int64_t>(rank);
    if (axis < -r || axis >= r) fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    return static_cast<std::size_t>(axis < 0 ? axis + r : axis);
  }

  [[noreturn]] void fail(const std::string& cause, std::string value = {}) const {
    std::string where = node_.name.empty() ? node_.op_type.str() : node_.name;
    throw Error(node_.op_type.str() + ": " + cause, {.node = std::move(where), .value = std::move(value)});
  }

 private:
  const ir::Value& input(std::size_t i) const { return g_.value(node_.inputs[i]); }
  const AttributeBecameInput* moved() const {
    const std::string_view op = node_.op_type.view();
    return attribute_became_input(op, op == "Split" ? "split" : "axes");
  }
  std::optional<std::vector<int64_t>> constant_ints(std::size_t i) const {
    const Tensor* t = constant(i);
    return t ? tensor_ints(*t) : std::nullopt;
  }
  ir::Graph& g_;
  const ir::Node& node_;
  int64_t opset_;
  InferState& state_;
};

}  // namespace xexp::infer
