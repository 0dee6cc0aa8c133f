#pragma once
// What a shape value holds (Shape(X)[1:] -> ["seq", 64], seq - seq -> [0]) as the rules see it: the
// small integer computation feeding a value (Shape, Gather, Slice, Split, Concat, arithmetic, Equal,
// Where, ...) is copied into a scratch graph and inferred there with the rules inference runs on load
// (infer/shape_ops.hpp), so that rules and inference agree on every op. It is read again at each
// question rather than kept from load: rules rewrite the graph, and what was kept would go stale.
#include <algorithm>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "xexp/infer/infer.hpp"
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace detail {
// Nodes copied into the scratch graph at most: shape computations are short chains.
inline constexpr std::size_t kShapeValueNodes = 24;

// Ops whose result inference can hold as content, when it is a small integer vector; the rules on shape
// values match them (Shape and Size start a computation: folding already turns their static parts
// into constants).
inline constexpr rewrite::FixedString kShapeValueOps =
    "Gather|Slice|Split|Squeeze|Unsqueeze|Concat|Reshape|Cast|Identity|Add|Sub|Mul|Div|Equal|Where";
inline bool computes_shape_value(const ir::Node& n) {
  static const std::vector<Symbol> ops = [] {
    std::vector<Symbol> out{Symbol("Shape"), Symbol("Size")};
    const std::string_view all = kShapeValueOps.view();
    for (std::size_t start = 0; start <= all.size();) {
      const std::size_t bar = std::min(all.find('|', start), all.size());
      out.emplace_back(all.substr(start, bar - start));
      start = bar + 1;
    }
    return out;
  }();
  return n.domain.empty() && std::find(ops.begin(), ops.end(), n.op_type) != ops.end();
}
// A 0-D or 1-D integer or boolean value short enough to be a shape.
inline bool is_small_vector(const ir::Value& v) {
  if (!(xexp::is_integer(v.elem) || v.elem == ElemType::Bool) || !v.shape || v.shape->size() > 1)
    return false;
  return v.shape->empty() || ((*v.shape)[0].is_static() && (*v.shape)[0].value() <= infer::kMaxShapeContent);
}
// The opset a node's spelling implies for what inference reads differently across versions: axes as an
// attribute (Squeeze and Unsqueeze before 13), starts and ends as attributes (Slice before 10).
inline int64_t spelled_opset(const ir::Node& n) {
  return n.attribute(Symbol("axes")) || n.attribute(Symbol("starts")) ? 9 : 18;
}

class ScratchCopy {
 public:
  explicit ScratchCopy(const ir::Graph& g) : g_(g) {}

  // Copies the computation of `v` (or `v` alone, as an input of its type, where the copy stops).
  std::optional<ir::ValueId> copy(ir::ValueId v) {
    if (auto it = copied_.find(v); it != copied_.end()) return it->second;
    const ir::Value& value = g_.value(v);
    ir::ValueId id;
    if (const Tensor* t = rewrite::constant_tensor(g_, v); t && is_small_vector(value)) {
      id = scratch_.add_initializer(value.name, *t);
    } else if (value.producer != ir::kNone && is_small_vector(value) &&
               computes_shape_value(g_.node(value.producer))) {
      const ir::Node& n = g_.node(value.producer);
      if (order_.size() >= kShapeValueNodes) return std::nullopt;
      std::vector<ir::ValueId> inputs;
      for (ir::ValueId in : n.inputs) {
        if (in == ir::kNone) {
          inputs.push_back(ir::kNone);
          continue;
        }
        std::optional<ir::ValueId> c =
            n.op_type == Symbol("Shape") || n.op_type == Symbol("Size") ? leaf(in) : copy(in);
        if (!c) return std::nullopt;
        inputs.push_back(*c);
      }
      if (auto it = copied_.find(v); it != copied_.end()) return it->second;  // a node with several outputs
      std::vector<ir::ValueId> outputs;
      for (ir::ValueId out : n.outputs) {
        if (out == ir::kNone) {
          outputs.push_back(ir::kNone);
          continue;
        }
        outputs.push_back(scratch_.add_value(g_.value(out).name));
        copied_[out] = outputs.back();
      }
      order_.push_back(
          scratch_.add_node(n.op_type, std::move(inputs), std::move(outputs), n.attributes, n.name));
      spellings_.push_back(spelled_opset(n));
      return copied_[v];
    } else {
      return leaf(v);
    }
    copied_[v] = id;
    return id;
  }

  // Infers the copied nodes in order; the content of `v`'s copy, or nullopt.
  std::optional<Shape> content(ir::ValueId copy_of_v) {
    infer::InferState state;
    try {
      for (std::size_t k = 0; k < order_.size(); ++k)
        infer::infer_node(scratch_, order_[k], spellings_[k], state);
    } catch (const Error&) {
      return std::nullopt;  // a computation the runtime would reject: nothing to say about it
    }
    if (const Shape* s = state.value_shapes.find(copy_of_v)) return *s;
    if (const Tensor* t = infer::graph_constant(scratch_, copy_of_v))
      if (auto v = infer::tensor_ints(*t)) return infer::content_of(*v);
    return std::nullopt;
  }

 private:
  // `v` as an input of the scratch graph, with its type and shape.
  ir::ValueId leaf(ir::ValueId v) {
    if (auto it = copied_.find(v); it != copied_.end()) return it->second;
    const ir::Value& value = g_.value(v);
    const ir::ValueId id = scratch_.add_input(value.name, value.elem, value.shape);
    copied_[v] = id;
    return id;
  }

  const ir::Graph& g_;
  ir::Graph scratch_;
  std::unordered_map<ir::ValueId, ir::ValueId> copied_;
  std::vector<ir::NodeId> order_;  // the copied nodes, producers first
  std::vector<int64_t> spellings_;
};
}  // namespace detail

// The elements of a small integer (or boolean, as 0 and 1) value as dimensions, static or symbolic,
// unknown where the computation does not say; nullopt when the value is not such a computation.
inline std::optional<Shape> shape_value(const ir::Graph& g, ir::ValueId v) {
  if (v == ir::kNone || !detail::is_small_vector(g.value(v))) return std::nullopt;
  detail::ScratchCopy scratch(g);
  std::optional<ir::ValueId> copy = scratch.copy(v);
  if (!copy) return std::nullopt;
  return scratch.content(*copy);
}
inline std::optional<Shape> shape_value(const ValueView& v) { return shape_value(*v.graph, v.id); }

// The values of a shape value whose elements are all known integers.
inline std::optional<std::vector<int64_t>> static_shape_value(const ValueView& v) {
  std::optional<Shape> content = shape_value(v);
  return content ? infer::content_ints(*content) : std::nullopt;
}

}  // namespace xexp::patterns
