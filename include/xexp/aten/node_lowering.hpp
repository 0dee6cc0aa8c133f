#pragma once
// What a converter sees of one aten node (the Python capture's format, python/xexp/_capture.py): its
// inputs as names in the GraphBuilder being filled, its attributes by schema argument name, the dtype
// and shape torch traced for each output, and the builder itself. A converter emits ONNX nodes with
// `g.op.X(...)` and names each result with `result(k, name)`; the lowering (lower.hpp) checks the
// results against the trace.
// A non-tensor argument the trace computed from a dynamic dimension (the `size` of a view) is no
// attribute but an int64 input after the tensors, named in attribute `dynamic_args`: reading it as a
// number (i, f, ints) fails naming it, and the converters that handle it read it with shape_input,
// size_input or dynamic_input.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "xexp/builder/graph_builder.hpp"
#include "xexp/core/error.hpp"
#include "xexp/eval/tensor_util.hpp"
#include "xexp/ir/graph.hpp"

namespace xexp::aten {

using eval::cast_tensor;
using eval::filled;
using eval::normalize_axis;

class NodeLowering {
 public:
  // `input_name(id)` gives the builder name of an aten value (adding an initializer on first use).
  NodeLowering(GraphBuilder& g, const ir::Graph& aten, const ir::Node& node,
               std::function<const std::string&(ir::ValueId)> input_name)
      : g(g), aten_(aten), node_(node), input_name_(std::move(input_name)), results_(node.outputs.size()) {
    if (const ir::Attribute* a = node.attribute(Symbol("dynamic_args"))) dynamic_args_ = a->strings;
    if (dynamic_args_.size() > node.inputs.size()) fail("attribute 'dynamic_args' names more arguments than there are inputs");
    tensor_inputs_ = node.inputs.size() - dynamic_args_.size();
  }

  GraphBuilder& g;

  std::string_view op() const { return node_.op_type.view(); }
  const ir::Node& node() const { return node_; }

  // ---- inputs (tensor arguments of the schema, in order; a tensor list is one input per element) --
  std::size_t input_count() const { return tensor_inputs_; }
  bool has_input(std::size_t k) const { return k < tensor_inputs_ && node_.inputs[k] != ir::kNone; }
  const std::string& input(std::size_t k) const {
    if (!has_input(k)) fail("input " + std::to_string(k) + " is missing");
    return input_name_(node_.inputs[k]);
  }
  ElemType input_type(std::size_t k) const { return g.get_type(input(k)); }
  const Shape& input_shape(std::size_t k) const { return g.get_shape(input(k)); }
  std::size_t input_rank(std::size_t k) const { return g.get_rank(input(k)); }
  // Input k as `type`, or the Python number the capture wrote as attribute `name` in its place.
  std::string operand(std::size_t k, std::string_view name, ElemType type) {
    if (has_input(k)) return cast(input(k), type);
    if (!has_attribute(name)) fail("input " + std::to_string(k) + " ('" + std::string(name) + "') is missing");
    return constant(f(name), type);
  }

  // ---- attributes (schema arguments that are not tensors) -----------------------------------------
  bool has_attribute(std::string_view name) const { return node_.attribute(Symbol(name)) != nullptr || is_dynamic(name); }
  int64_t i(std::string_view name, std::optional<int64_t> otherwise = std::nullopt) const {
    refuse_dynamic(name);
    if (const ir::Attribute* a = node_.attribute(Symbol(name))) return a->type == ir::AttrType::Float ? static_cast<int64_t>(a->f) : a->i;
    if (!otherwise) fail("attribute '" + std::string(name) + "' is missing");
    return *otherwise;
  }
  double f(std::string_view name, std::optional<double> otherwise = std::nullopt) const {
    refuse_dynamic(name);
    if (const ir::Attribute* a = node_.attribute(Symbol(name))) return a->type == ir::AttrType::Int ? static_cast<double>(a->i) : a->f;
    if (!otherwise) fail("attribute '" + std::string(name) + "' is missing");
    return *otherwise;
  }
  std::vector<int64_t> ints(std::string_view name, std::optional<std::vector<int64_t>> otherwise = std::nullopt) const {
    refuse_dynamic(name);
    if (const ir::Attribute* a = node_.attribute(Symbol(name))) return a->type == ir::AttrType::Int ? std::vector<int64_t>{a->i} : a->ints;
    if (!otherwise) fail("attribute '" + std::string(name) + "' is missing");
    return *otherwise;
  }
  // ---- arguments computed from dynamic dimensions ------------------------------------------------------
  bool is_dynamic(std::string_view name) const {
    return std::find(dynamic_args_.begin(), dynamic_args_.end(), name) != dynamic_args_.end();
  }
  // A computed argument: an int64 scalar (one size) or 1-D tensor (a list).
  const std::string& dynamic_input(std::string_view name) const {
    if (!is_dynamic(name)) fail("argument '" + std::string(name) + "' is not computed");
    const auto k = static_cast<std::size_t>(std::find(dynamic_args_.begin(), dynamic_args_.end(), name) - dynamic_args_.begin());
    const ir::ValueId id = node_.inputs.at(tensor_inputs_ + k);
    if (id == ir::kNone) fail("argument '" + std::string(name) + "' is computed but its input is missing");
    return input_name_(id);
  }
  // A list of sizes as a 1-D int64 tensor: computed, or the attribute's numbers.
  std::string shape_input(std::string_view name) {
    if (is_dynamic(name)) return dynamic_input(name);
    return ints_constant(ints(name));
  }
  // One size as a 1-D int64 tensor of one element (Slice's starts, ends): computed, or the number.
  std::string size_input(std::string_view name, std::optional<int64_t> otherwise = std::nullopt) {
    if (is_dynamic(name)) return g.op.Unsqueeze(dynamic_input(name), std::vector<int64_t>{0});
    return ints_constant({i(name, otherwise)});
  }

  std::string s(std::string_view name, std::string otherwise) const {
    const ir::Attribute* a = node_.attribute(Symbol(name));
    return a ? a->s : otherwise;
  }

  // ---- outputs as torch traced them ----------------------------------------------------------------
  std::size_t output_count() const { return node_.outputs.size(); }
  bool output_read(std::size_t k) const {
    return k < node_.outputs.size() && node_.outputs[k] != ir::kNone && aten_.value(node_.outputs[k]).is_read();
  }
  ElemType output_type(std::size_t k = 0) const {
    const ir::Value& v = aten_.value(node_.outputs.at(k));
    if (v.elem == ElemType::Undefined) fail("the trace gives no dtype for output '" + v.name + "'");
    return v.elem;
  }
  const Shape& output_shape(std::size_t k = 0) const {
    const ir::Value& v = aten_.value(node_.outputs.at(k));
    if (!v.shape) fail("the trace gives no shape for output '" + v.name + "'");
    return *v.shape;
  }
  std::vector<int64_t> static_output_shape(std::size_t k = 0) const { return static_dims(output_shape(k), "output"); }
  std::vector<int64_t> static_input_shape(std::size_t k) const { return static_dims(input_shape(k), "input"); }

  void result(std::size_t k, std::string name) { results_.at(k) = std::move(name); }
  void result(std::string name) { result(0, std::move(name)); }
  const std::vector<std::string>& results() const { return results_; }

  // ---- helpers ---------------------------------------------------------------------------------------
  std::string constant(double value, ElemType type) { return g.make_initializer("", filled(type, {}, value)); }
  std::string ints_constant(std::vector<int64_t> values) {
    const auto n = static_cast<int64_t>(values.size());
    return g.make_initializer("", Tensor::from<int64_t>({n}, values));
  }
  std::string cast(const std::string& name, ElemType type) {
    if (g.get_type(name) == type) return name;
    return g.op.Cast(name, {{"to", static_cast<int64_t>(type)}});
  }
  int64_t axis(std::string_view name, std::size_t rank) const { return normalize_axis(i(name), rank, "dim"); }

  // The lowering puts the op and its module in front of the cause.
  [[noreturn]] void fail(const std::string& cause) const { throw Error(cause, {.node = node_.name, .value = {}}); }

 private:
  void refuse_dynamic(std::string_view name) const {
    if (is_dynamic(name))
      fail("argument '" + std::string(name) + "' is computed from a dynamic dimension: this converter needs it static");
  }

  std::vector<int64_t> static_dims(const Shape& shape, const char* what) const {
    std::vector<int64_t> dims;
    for (const Dim& d : shape) {
      if (!d.is_static())
        fail(std::string("the ") + what + " shape " + shape_str(shape) + " is not static: this converter needs static sizes");
      dims.push_back(d.value());
    }
    return dims;
  }

  const ir::Graph& aten_;
  const ir::Node& node_;
  std::function<const std::string&(ir::ValueId)> input_name_;
  std::vector<std::string> results_;
  std::vector<std::string> dynamic_args_;  // the arguments given as inputs after the tensors
  std::size_t tensor_inputs_ = 0;
};

// One converter per aten op: reads the node through `c`, emits ONNX nodes, names the results.
using Converter = void (*)(NodeLowering& c);

}  // namespace xexp::aten
