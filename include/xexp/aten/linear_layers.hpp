#pragma once
// Linear layers make_fx decomposed. torch 1.13's make_fx (xexp.to_onnx's capture) traces through
// aten::linear and aten::matmul, whose kernels flatten a (..., k) input to 2-D: view(x, [m, k]), then
// mm or addmm, then view back to (..., n). torch.export and torch.onnx.export keep one product over
// the leading axes, which the optimizer fuses further (a bias into SkipLayerNormalization, attention
// projections into one MatMul); the views around a 2-D product hide it from those rules. This pass
// puts the product back on the aten graph: matmul(x, w) (+ add(bias)) in place of the three calls.
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

inline std::optional<std::vector<int64_t>> static_dims_of(const ir::Value& v) {
  if (!v.shape) return std::nullopt;
  std::vector<int64_t> dims;
  for (const Dim& d : *v.shape) {
    if (!d.is_static()) return std::nullopt;
    dims.push_back(d.value());
  }
  return dims;
}

// The value `view` reads when it only flattens the leading axes of a tensor of rank >= 3 to 2-D.
inline std::optional<ir::ValueId> flattened_input(const ir::Graph& g, ir::ValueId flat) {
  const ir::Value& v = g.value(flat);
  if (v.producer == ir::kNone || v.uses.size() != 1 || !is_aten_view(g.node(v.producer))) return std::nullopt;
  const ir::ValueId x = g.node(v.producer).inputs.at(0);
  const auto x_dims = static_dims_of(g.value(x)), flat_dims = static_dims_of(v);
  if (!x_dims || !flat_dims || x_dims->size() < 3 || flat_dims->size() != 2) return std::nullopt;
  int64_t rows = 1;
  for (std::size_t k = 0; k + 1 < x_dims->size(); ++k) rows *= (*x_dims)[k];
  if ((*flat_dims)[0] != rows || (*flat_dims)[1] != x_dims->back()) return std::nullopt;
  return x;
}

}  // namespace detail

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
    const auto x_dims = detail::static_dims_of(g.value(*x)), out_dims = detail::static_dims_of(out);
    const auto back_dims = detail::static_dims_of(g.value(back.outputs.at(0)));
    if (!detail::is_aten_view(back) || !x_dims || !out_dims || !back_dims) continue;
    std::vector<int64_t> expected(x_dims->begin(), x_dims->end() - 1);
    expected.push_back(out_dims->back());
    if (*back_dims != expected) continue;

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
      g.value(matmul_out).shape = make_shape(expected);
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
