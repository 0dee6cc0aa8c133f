#pragma once
// Facts on nodes: attributes (and the inputs that replaced them in newer opsets), axes, the cut one Slice
// makes, the node producing a value.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "xexp/core/slice_range.hpp"
#include "xexp/patterns/facts/constants.hpp"

namespace xexp::patterns {

// ---- attributes -------------------------------------------------------------------------------------
// Attribute `name` of n as an integer, `fallback` when n does not set it (contrib ops have no ONNX schema
// to read defaults from, and rules read flags such as transA or training_mode this way).
inline int64_t int_attribute(const ir::Node& n, const char* name, int64_t fallback) {
  const ir::Attribute* a = n.attribute(Symbol(name));
  return a ? a->i : fallback;
}
// The integers an op takes as attribute `name` in older opsets and as constant input `slot` in newer
// ones (Unsqueeze's and Reduce*'s axes, Split's sizes); `absent` when n sets neither (pass the op's
// default to accept it), nullopt when the input is computed at run time.
inline std::optional<std::vector<int64_t>> ints_attribute_or_input(
    const ir::Graph& g, const ir::Node& n, const char* name, std::size_t slot,
    std::optional<std::vector<int64_t>> absent = std::nullopt) {
  if (const ir::Attribute* a = n.attribute(Symbol(name))) return a->ints;
  if (slot < n.inputs.size() && n.inputs[slot] != ir::kNone) return int_constant(g, n.inputs[slot]);
  return absent;
}
// Sorted axes, negative ones counted from `rank` (nullopt: negative and the rank is unknown).
inline std::optional<std::vector<int64_t>> normalized_axes(std::vector<int64_t> axes,
                                                           std::optional<int64_t> rank) {
  for (int64_t& a : axes) {
    if (a >= 0) continue;
    if (!rank) return std::nullopt;
    a += *rank;
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}
// Two axes lists name the same axes of a value of rank `rank` (-1: unknown, then only lists without
// negative axes compare).
inline constexpr auto same_axes =
    fact<"same_axes">([](const std::vector<int64_t>& a, const std::vector<int64_t>& b, int64_t rank) {
      const std::optional<int64_t> known = rank >= 0 ? std::optional<int64_t>(rank) : std::nullopt;
      const auto first = normalized_axes(a, known), second = normalized_axes(b, known);
      return first && second && *first == *second;
    });
// The axes Unsqueeze node n adds, sorted and counted in its output's rank; nullopt when computed at run
// time or negative in an unknown rank.
inline std::optional<std::vector<int64_t>> unsqueezed_axes(const ir::Graph& g, const ir::Node& n) {
  const std::optional<std::vector<int64_t>> given = ints_attribute_or_input(g, n, "axes", 1);
  if (!given) return std::nullopt;
  const ir::Value& in = g.value(n.inputs[0]);
  return normalized_axes(
      *given, in.shape ? std::optional<int64_t>(static_cast<int64_t>(in.shape->size() + given->size()))
                       : std::nullopt);
}
// Sorted axes 0, 1, ..., k - 1: an Unsqueeze of them adds leading axes, which broadcasting adds anyway.
inline bool are_leading_axes(const std::vector<int64_t>& sorted_axes) {
  for (std::size_t k = 0; k < sorted_axes.size(); ++k)
    if (sorted_axes[k] != static_cast<int64_t>(k)) return false;
  return true;
}
// A Slice (the opset 10 form) cutting one axis, with a constant start, axis and step (absent: axis 0,
// step 1); its end may be computed at run time (a causal mask cut to the sequence length).
struct AxisCut {
  int64_t start, axis, step;
  ir::ValueId end;
};
inline std::optional<AxisCut> axis_cut(const ir::Graph& g, const ir::Node& n) {
  if (n.op_type != Symbol("Slice") || !n.domain.empty() || n.inputs.size() < 3) return std::nullopt;
  auto input = [&](std::size_t k) { return k < n.inputs.size() ? n.inputs[k] : ir::kNone; };
  const std::optional<std::vector<int64_t>> starts = int_constant(g, input(1));
  std::optional<std::vector<int64_t>> axes = std::vector<int64_t>{0}, steps = std::vector<int64_t>{1};
  if (input(3) != ir::kNone) axes = int_constant(g, input(3));
  if (input(4) != ir::kNone) steps = int_constant(g, input(4));
  if (!starts || !axes || !steps || starts->size() != 1 || axes->size() != 1 || steps->size() != 1)
    return std::nullopt;
  return AxisCut{(*starts)[0], (*axes)[0], (*steps)[0], input(2)};
}

// A Slice's steps input (the fifth) is absent or a constant of ones.
inline constexpr auto unit_steps = fact<"unit_steps">([](const ValueView& slice) {
  const ir::ValueId steps = rewrite::input_of(slice, 4);
  if (steps == ir::kNone) return true;
  std::optional<std::vector<int64_t>> values = int_constant(*slice.graph, steps);
  return values && std::all_of(values->begin(), values->end(), [](int64_t s) { return s == 1; });
});

// Where Slice node `id` cuts axis `axis` of its input (rank `rank`, `dim` elements on that axis): one
// axis, step 1, constant bounds; nullopt otherwise.
struct SlicePiece {
  ir::NodeId node;
  int64_t start, count;
};
inline std::optional<SlicePiece> slice_piece(const ir::Graph& g, ir::NodeId id, int64_t rank, int64_t dim,
                                             int64_t axis) {
  const std::optional<AxisCut> cut = axis_cut(g, g.node(id));
  if (!cut || cut->step != 1 || (cut->axis < 0 ? cut->axis + rank : cut->axis) != axis) return std::nullopt;
  const std::optional<std::vector<int64_t>> end = int_constant(g, cut->end);
  if (!end || end->size() != 1) return std::nullopt;
  const SliceRange range = slice_range(dim, cut->start, (*end)[0], 1);
  return SlicePiece{id, range.start, range.count};
}

// Node n is an `op` (any domain: the rules that read it checked the domain where it matters).
inline bool has_op(const ir::Node& n, const char* op) { return n.op_type == Symbol(op); }
// The node of op `op` (default domain) producing v as its first output, or nullptr (also for an omitted
// input, kNone).
inline const ir::Node* producer_of(const ir::Graph& g, ir::ValueId v, const char* op) {
  if (v == ir::kNone) return nullptr;
  const ir::Value& value = g.value(v);
  if (value.producer == ir::kNone || value.output_index != 0) return nullptr;
  const ir::Node& n = g.node(value.producer);
  return n.op_type == Symbol(op) && n.domain.empty() && !n.inputs.empty() ? &n : nullptr;
}

// ---- more facts on nodes ------------------------------------------------------------------------------
// A BatchNormalization in inference mode: training_mode absent (before opset 14, or the default) or 0.
inline constexpr auto in_inference_mode = fact<"in_inference_mode">(
    [](const ValueView& n) { return int_attribute(rewrite::node_of(n), "training_mode", 0) == 0; });
// Flag attribute `name` of the node producing v, 1 when set to anything but 0, 0 when 0 or absent
// (contrib ops' transA/transB): `1 - flag_of(...)` flips it.
inline constexpr auto flag_of = fact<"flag_of">([](const ValueView& v, const std::string& name) {
  return static_cast<int64_t>(int_attribute(rewrite::node_of(v), name.c_str(), 0) != 0 ? 1 : 0);
});
// Integer attribute `name` of the node producing v as written, `absent` when the node does not give it
// (not the schema's default): Dropout's is_test=0, written, is opset < 7's training mode.
inline constexpr auto int_attribute_of =
    fact<"int_attribute_of">([](const ValueView& v, const std::string& name, int64_t absent) {
      return int_attribute(rewrite::node_of(v), name.c_str(), absent);
    });
// v is the first output of a default-domain `op` node.
inline constexpr auto produced_by = fact<"produced_by">([](const ValueView& v, const std::string& op) {
  return producer_of(*v.graph, v.id, op.c_str()) != nullptr;
});
// The inputs of the node producing v after the first (Clip's bounds, a binary op's second operand) are
// scalars, or omitted, and none is the first: a Transpose or Reshape of the first input can move past
// the node.
inline constexpr auto extra_inputs_are_scalars = fact<"extra_inputs_are_scalars">([](const ValueView& op) {
  const ir::Node& n = rewrite::node_of(op);
  for (std::size_t k = 1; k < n.inputs.size(); ++k) {
    if (n.inputs[k] == ir::kNone) continue;
    const ir::Value& v = op.graph->value(n.inputs[k]);
    if (n.inputs[k] == n.inputs[0] || !v.shape || !rewrite::facts::is_scalar(*v.shape)) return false;
  }
  return true;
});
// The input of the node producing v that a constant holding one integer i picks (negative counts from
// the end, as SequenceAt and Gather do), or kNone when i is out of range or not one integer.
inline constexpr auto input_at = fact<"input_at">([](const ValueView& v, const Tensor& index) {
  const ir::Node& n = rewrite::node_of(v);
  const std::optional<std::vector<int64_t>> i = int_values(index);
  if (!i || i->size() != 1) return ir::kNone;
  const auto count = static_cast<int64_t>(n.inputs.size());
  const int64_t k = (*i)[0] < 0 ? (*i)[0] + count : (*i)[0];
  return k >= 0 && k < count ? n.inputs[k] : ir::kNone;
});

// A Conv without padding: pads absent or all zero, auto_pad absent, NOTSET or VALID.
inline constexpr auto unpadded = fact<"unpadded">([](const ValueView& conv) {
  const ir::Node& n = rewrite::node_of(conv);
  if (const ir::Attribute* a = n.attribute(Symbol("auto_pad"));
      a && a->s != "NOTSET" && a->s != "VALID" && !a->s.empty())
    return false;
  const ir::Attribute* pads = n.attribute(Symbol("pads"));
  return !pads || std::all_of(pads->ints.begin(), pads->ints.end(), [](int64_t p) { return p == 0; });
});
// The one value a ConstantOfShape fills with (its `value` attribute), nullptr when it gives none.
inline const Tensor* fill_value(const ValueView& fill) {
  const ir::Attribute* a = rewrite::node_of(fill).attribute(Symbol("value"));
  return a && a->tensors.size() == 1 ? &a->tensors[0] : nullptr;
}
// A ConstantOfShape's value is one element (or absent).
inline constexpr auto fills_one_value = fact<"fills_one_value">([](const ValueView& fill) {
  const Tensor* value = fill_value(fill);
  return !value || value->size() == 1;
});
// A ConstantOfShape's value as a scalar of its type: float 0 when the node gives none.
inline constexpr auto fill_scalar = fact<"fill_scalar">([](const ValueView& fill) {
  const Tensor* value = fill_value(fill);
  return value ? value->reshaped({}) : Tensor::scalar<float>(0.f);
});

}  // namespace xexp::patterns
