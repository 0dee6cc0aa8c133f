#pragma once
// Linear layers make_fx decomposed. torch 1.13's make_fx (xexp.to_onnx's capture) traces through
// aten::linear and aten::matmul, whose kernels flatten a (..., k) input to 2-D: view(x, [m, k]), then
// mm or addmm, then view back to (..., n). torch.export and torch.onnx.export keep one product over
// the leading axes, which the optimizer fuses further (a bias into SkipLayerNormalization, attention
// projections into one MatMul); the views around a 2-D product hide it from those rules. This pass
// puts the product back on the aten graph: matmul(x, w) (+ add(bias)) in place of the three calls. So
// for a batched matmul (q @ k.transpose(-1, -2)), which make_fx traces as expand, view, bmm, view.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "xexp/ir/graph.hpp"

namespace xexp::aten {

namespace detail {

inline bool is_aten_view(const ir::Node& n) {
  if (n.domain.view() != "aten") return false;
  const std::string_view op = n.op_type.view();
  return op == "view" || op == "_reshape_alias" || op == "_unsafe_view" || op == "reshape";
}

inline bool is_one(const ir::Attribute* a) {
  return !a || (a->type == ir::AttrType::Int ? a->i == 1 : a->f == 1.0f);
}

// Whether `a` and `b` are known to be the same size (static or one dynamic dimension's name).
inline bool same_dim(const Dim& a, const Dim& b) { return !a.is_unknown() && a == b; }

// The value `view` reads when it only flattens the leading axes of a tensor of rank >= 3 to 2-D: a
// view to rank 2 keeping the last dimension (static, so that the first is the product of the others,
// which may be dynamic).
inline std::optional<ir::ValueId> flattened_input(const ir::Graph& g, ir::ValueId flat) {
  const ir::Value& v = g.value(flat);
  if (v.producer == ir::kNone || v.uses.size() != 1 || !is_aten_view(g.node(v.producer))) return std::nullopt;
  const ir::ValueId x = g.node(v.producer).inputs.at(0);
  const ir::Value& xv = g.value(x);
  if (!xv.shape || !v.shape || xv.shape->size() < 3 || v.shape->size() != 2) return std::nullopt;
  if (!xv.shape->back().is_static() || !same_dim(xv.shape->back(), v.shape->back())) return std::nullopt;
  return x;
}

// The value a bmm input was made from when it is make_fx's flattening of a batched matmul operand:
// view(clone?(expand(x))) to (batch, m, k), with the expand changing no dimension of x (rank >= 3) and
// the view keeping its last two.
inline std::optional<ir::ValueId> batched_operand(const ir::Graph& g, ir::ValueId flat) {
  auto single_use_aten = [&](ir::ValueId v, std::string_view op) -> const ir::Node* {
    const ir::Value& value = g.value(v);
    if (value.producer == ir::kNone || value.uses.size() != 1) return nullptr;
    const ir::Node& n = g.node(value.producer);
    return n.domain.view() == "aten" && n.op_type.view() == op ? &n : nullptr;
  };
  const ir::Value& v = g.value(flat);
  if (v.producer == ir::kNone || v.uses.size() != 1 || !is_aten_view(g.node(v.producer))) return std::nullopt;
  ir::ValueId expanded = g.node(v.producer).inputs.at(0);
  if (const ir::Node* clone = single_use_aten(expanded, "clone")) expanded = clone->inputs.at(0);
  const ir::Node* expand = single_use_aten(expanded, "expand");
  if (!expand) return std::nullopt;
  const ir::ValueId x = expand->inputs.at(0);
  const std::optional<Shape>& x_shape = g.value(x).shape;
  const std::optional<Shape>& e_shape = g.value(expanded).shape;
  if (!x_shape || !e_shape || !v.shape || x_shape->size() < 3 || v.shape->size() != 3) return std::nullopt;
  if (!std::equal(x_shape->begin(), x_shape->end(), e_shape->begin(), e_shape->end(), same_dim)) return std::nullopt;
  const std::size_t r = x_shape->size();
  if (!same_dim((*v.shape)[1], (*x_shape)[r - 2]) || !same_dim((*v.shape)[2], (*x_shape)[r - 1])) return std::nullopt;
  return x;
}

}  // namespace detail

// Rewrites every view -> bmm -> view that make_fx traces for a matmul of tensors of rank >= 3 (the
// operands expanded to their broadcast shape, flattened to 3-D, the product viewed back) as one matmul,
// when the operands need no broadcasting: the optimizer's attention rules read what torch.onnx.export
// writes, one MatMul, and those views over dynamic batch sizes are nothing it folds. Returns how many it
// restored.
inline std::size_t restore_batched_matmuls(ir::Graph& g) {
  std::vector<ir::NodeId> products;
  for (ir::NodeId id : g.nodes())
    if (g.node(id).domain.view() == "aten" && g.node(id).op_type.view() == "bmm") products.push_back(id);
  std::size_t restored = 0;
  for (ir::NodeId id : products) {
    const ir::Node& product = g.node(id);
    const std::optional<ir::ValueId> a = detail::batched_operand(g, product.inputs.at(0));
    const std::optional<ir::ValueId> b = detail::batched_operand(g, product.inputs.at(1));
    const ir::Value& out = g.value(product.outputs.at(0));
    if (!a || !b || out.uses.size() != 1 || out.is_graph_output()) continue;
    const ir::NodeId back_id = out.uses[0].node;
    const ir::Node& back = g.node(back_id);
    const Shape &a_shape = *g.value(*a).shape, &b_shape = *g.value(*b).shape;
    const std::optional<Shape>& back_shape = g.value(back.outputs.at(0)).shape;
    const std::size_t r = a_shape.size();
    if (!detail::is_aten_view(back) || !back_shape || back_shape->size() != r || b_shape.size() != r) continue;
    Shape expected(a_shape.begin(), a_shape.end() - 1);  // a's batch axes and rows, b's columns
    expected.push_back(b_shape.back());
    if (!std::equal(a_shape.begin(), a_shape.end() - 2, b_shape.begin(), detail::same_dim) ||
        !std::equal(expected.begin(), expected.end(), back_shape->begin(), back_shape->end(), detail::same_dim))
      continue;
    const ir::ValueId result = back.outputs[0];
    const ir::NodeId before = back.next;
    const std::string name = back.name, metadata = product.unknown;
    g.remove_node(back_id);
    g.remove_node(id);  // the views and expands that fed it are no longer read: the lowering skips them
    const ir::NodeId matmul =
        g.add_node(Symbol("matmul"), {*a, *b}, {result}, {}, name, Symbol("aten"), before);
    g.node(matmul).unknown = metadata;
    ++restored;
  }
  return restored;
}

// Rewrites every view -> mm/addmm -> view over the leading axes of `g` (an aten-domain graph) as one
// matmul (and an add of the bias). Returns how many products it restored.
inline std::size_t restore_linear_layers(ir::Graph& g) {
  std::vector<ir::NodeId> products;
  for (ir::NodeId id : g.nodes()) {
    const ir::Node& n = g.node(id);
    if (n.domain.view() == "aten" && (n.op_type.view() == "mm" || n.op_type.view() == "addmm")) products.push_back(id);
  }
  std::size_t restored = 0;
  for (ir::NodeId id : products) {
    const ir::Node& product = g.node(id);
    const bool with_bias = product.op_type.view() == "addmm";
    if (with_bias && !(detail::is_one(product.attribute(Symbol("alpha"))) && detail::is_one(product.attribute(Symbol("beta")))))
      continue;
    const std::size_t slot = with_bias ? 1 : 0;
    const std::optional<ir::ValueId> x = detail::flattened_input(g, product.inputs.at(slot));
    const ir::Value& out = g.value(product.outputs.at(0));
    if (!x || out.uses.size() != 1 || out.is_graph_output()) continue;
    const ir::NodeId back_id = out.uses[0].node;
    const ir::Node& back = g.node(back_id);
    const Shape& x_shape = *g.value(*x).shape;
    const std::optional<Shape>& back_shape = g.value(back.outputs.at(0)).shape;
    if (!detail::is_aten_view(back) || !out.shape || !back_shape) continue;
    Shape expected(x_shape.begin(), x_shape.end() - 1);  // the leading axes, then the product's last
    expected.push_back(out.shape->back());
    if (!std::equal(expected.begin(), expected.end(), back_shape->begin(), back_shape->end(), detail::same_dim)) continue;

    const ir::ValueId weight = product.inputs.at(slot + 1), result = back.outputs[0];
    const ir::ValueId bias = with_bias ? product.inputs[0] : ir::kNone;
    const ir::NodeId flatten = g.value(product.inputs[slot]).producer, before = back.next;
    const std::string name = back.name, metadata = product.unknown;  // the module records stay
    const ElemType type = g.value(result).elem;
    g.remove_node(back_id);
    g.remove_node(id);
    g.remove_node(flatten);
    ir::ValueId matmul_out = result;
    if (with_bias) {
      matmul_out = g.add_value(g.unique_value_name(name + "_matmul"));
      g.value(matmul_out).elem = type;
      g.value(matmul_out).shape = expected;
    }
    const ir::NodeId matmul = g.add_node(Symbol("matmul"), {*x, weight}, {matmul_out}, {}, g.unique_node_name(name + "_matmul"),
                                         Symbol("aten"), before);
    g.node(matmul).unknown = metadata;
    if (with_bias) {
      const ir::NodeId add = g.add_node(Symbol("add"), {matmul_out, bias}, {result}, {}, name, Symbol("aten"), before);
      g.node(add).unknown = metadata;
    }
    ++restored;
  }
  return restored;
}

}  // namespace xexp::aten
