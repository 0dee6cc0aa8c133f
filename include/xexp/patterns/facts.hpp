#pragma once
// Facts the rules share, declared once with the name rules print (`.when(is_last_axis(axis, x))`), and
// the plain helpers behind them: element types, constants (integer lists such as shapes and axes,
// single numbers), shapes, and small computations on constants done with the evaluator's kernels so
// that every element type is handled as when the model runs. A fact used by one rule only stays in
// that rule's header.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <type_traits>
#include <vector>

#include "xexp/core/slice_range.hpp"
#include "xexp/eval/evaluate_op.hpp"
#include "xexp/eval/tensor_util.hpp"
#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

using rewrite::fact;
using rewrite::ValueView;

// ---- element types ----------------------------------------------------------------------------------
inline bool is_integer_type(ElemType t) { return t == ElemType::Int64 || t == ElemType::Int32; }

// The element types ONNX Runtime has com.microsoft activation kernels for (float everywhere, the half
// types on GPUs); not double, which its CPU kernels lack.
inline constexpr auto is_activation_float = fact<"is_activation_float">([](const ValueView& x) {
  const ElemType t = x.elem();
  return t == ElemType::Float || t == ElemType::Float16 || t == ElemType::BFloat16;
});
// The float types of the normalization operators (type constraint T of LayerNormalization and of
// ONNX Runtime's [Skip][Simplified]LayerNormalization).
inline bool is_normalization_type(ElemType t) {
  return t == ElemType::Float || t == ElemType::Double || t == ElemType::Float16 || t == ElemType::BFloat16;
}
inline constexpr auto is_normalization_float =
    fact<"is_normalization_float">([](const ValueView& x) { return is_normalization_type(x.elem()); });
inline constexpr auto is_integer =
    fact<"is_integer">([](const ValueView& x) { return is_integer_type(x.elem()); });
// The float types ONNX Runtime 1.30's CPU kernels cover for arithmetic, activations and reductions:
// not bfloat16 (Add, Softmax, ReduceSum... have no bfloat16 kernel there).
inline bool is_cpu_float_type(ElemType t) {
  return t == ElemType::Float || t == ElemType::Double || t == ElemType::Float16;
}
inline constexpr auto is_cpu_float =
    fact<"is_cpu_float">([](const ValueView& x) { return is_cpu_float_type(x.elem()); });

// ---- constants --------------------------------------------------------------------------------------
// The values of an int32/int64 tensor, or nullopt for another type.
inline std::optional<std::vector<int64_t>> int_values(const Tensor& t) {
  if (!is_integer_type(t.type())) return std::nullopt;
  return eval::as_int64s(t);
}
// The values of a constant int32/int64 value, or nullopt when the value is not such a constant.
inline std::optional<std::vector<int64_t>> int_constant(const ir::Graph& g, ir::ValueId v) {
  const Tensor* t = rewrite::constant_tensor(g, v);
  return t ? int_values(*t) : std::nullopt;
}
inline std::optional<std::vector<int64_t>> int_constant(const ValueView& v) {
  return int_constant(*v.graph, v.id);
}

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

// The node of op `op` (default domain) producing v as its first output, or nullptr (also for an omitted
// input, kNone).
inline const ir::Node* producer_of(const ir::Graph& g, ir::ValueId v, const char* op) {
  if (v == ir::kNone) return nullptr;
  const ir::Value& value = g.value(v);
  if (value.producer == ir::kNone || value.output_index != 0) return nullptr;
  const ir::Node& n = g.node(value.producer);
  return n.op_type == Symbol(op) && n.domain.empty() && !n.inputs.empty() ? &n : nullptr;
}

// Two dimensions known to be equal: the same size or the same symbol, never two unknown ones.
inline bool same_dim(const Dim& a, const Dim& b) {
  return rewrite::facts::KnownDim{a} == rewrite::facts::KnownDim{b};
}

// The single number held by a constant of one element (shape () or (1,) or (1,1)...), or nullopt.
inline std::optional<double> scalar_constant(const ir::Graph& g, ir::ValueId v) {
  const Tensor* t = rewrite::constant_tensor(g, v);
  if (!t || t->size() != 1 || t->type() == ElemType::String) return std::nullopt;
  return eval::element_as_double(*t, 0);
}
inline std::optional<double> scalar_constant(const ValueView& v) { return scalar_constant(*v.graph, v.id); }

// Every element of a numeric tensor equals `value` (false for an empty tensor).
inline bool equal_everywhere(const Tensor& t, double value) {
  if (t.type() == ElemType::String || t.size() == 0) return false;
  for (int64_t k = 0; k < t.size(); ++k)
    if (eval::element_as_double(t, k) != value) return false;
  return true;
}
inline constexpr auto all_equal = fact<"all_equal">(equal_everywhere);
inline constexpr auto all_zero = fact<"all_zero">([](const Tensor& t) { return equal_everywhere(t, 0.0); });
// No element of a numeric tensor is zero (false for an empty tensor): a divisor, a fill that casts to
// true.
inline constexpr auto nowhere_zero = fact<"nowhere_zero">([](const Tensor& t) {
  if (t.type() == ElemType::String || t.size() == 0) return false;
  for (int64_t k = 0; k < t.size(); ++k)
    if (eval::element_as_double(t, k) == 0.0) return false;
  return true;
});

// A constant of one element within `tolerance` of `exact`. Exporters write float32 constants, or
// constants rounded to float16 in half-precision models (sqrt(2) becomes 1.4140625): the activation
// fusions accept a tolerance wide enough for those roundings and far narrower than any other formula.
inline bool scalar_near(const ValueView& v, double exact, double tolerance) {
  std::optional<double> s = scalar_constant(v);
  return s && std::abs(*s - exact) <= tolerance;
}
// A constant (a value or a Const capture's tensor) of one element equal to `exact`: scalar_is(half, 0.5).
inline constexpr auto scalar_is = fact<"scalar_is">([](const auto& v, double exact) {
  if constexpr (std::is_same_v<std::decay_t<decltype(v)>, Tensor>)
    return v.size() == 1 && v.type() != ElemType::String && eval::element_as_double(v, 0) == exact;
  else
    return scalar_near(v, exact, 0);
});
// The factor a Mul or Div by the scalar s applies: s for Mul, 1/s for Div.
inline double scaling_factor(const ValueView& scaled, const Tensor& s) {
  const double v = eval::scalar_double(s);
  return rewrite::node_of(scaled).op_type == Symbol("Div") ? 1.0 / v : v;
}
// A constant of one element, any numeric type.
inline constexpr auto is_scalar_constant = fact<"is_scalar_constant">([](const ValueView& v) {
  const Tensor* t = v.constant();
  return t && t->size() == 1 && t->type() != ElemType::String;
});
// A Conv's bias that a rule can fold constants into, with weights w: omitted, or a constant of w's type
// holding one value per output channel, as a valid Conv has (another one is left for the runtime to report).
inline constexpr auto conv_bias_folds = fact<"conv_bias_folds">([](const ValueView& b, const Tensor& w) {
  if (b.id == ir::kNone) return true;
  const Tensor* c = b.constant();
  return c && !w.dims().empty() && c->type() == w.type() && c->dims() == std::vector<int64_t>{w.dims()[0]};
});
// The number of a one-element constant, as a float attribute (epsilon, alpha).
inline constexpr auto scalar_float = fact<"scalar_float">([](const auto& v) {
  if constexpr (std::is_same_v<std::decay_t<decltype(v)>, Tensor>)
    return static_cast<float>(eval::element_as_double(v, 0));
  else
    return static_cast<float>(eval::element_as_double(*v.constant(), 0));
});

// ---- shapes and axes --------------------------------------------------------------------------------
// Static dims of a value's shape, or nullopt.
inline std::optional<std::vector<int64_t>> static_dims_of(const ValueView& v) {
  if (!v.shape()) return std::nullopt;
  return static_dims(*v.shape());
}
// `axis` (negative counts from the end) is the last axis of x, whose rank is known.
inline bool last_axis_of(int64_t axis, const ValueView& x) {
  if (!x.shape()) return false;
  const auto rank = static_cast<int64_t>(x.shape()->size());
  return rank > 0 && (axis == -1 || axis == rank - 1);
}
inline constexpr auto is_last_axis = fact<"is_last_axis">(last_axis_of);
inline constexpr auto is_last_axis_only =
    fact<"is_last_axis_only">([](const std::vector<int64_t>& axes, const ValueView& x) {
      return axes.size() == 1 && last_axis_of(axes[0], x);
    });
// Two dimensions an elementwise op broadcasts against each other are one size: the same size or symbol,
// or two symbols, which infer/broadcast.hpp takes as equal (exporters do not broadcast a dynamic
// dimension of 1). That pairs different spellings of one size: "cache+seq" and "(cache+seq)", or a
// symbol of the file's value_info ("cache_length+seq_length") and ours ("0+cache_length+cache+seq").
inline bool broadcast_pairs(const Dim& a, const Dim& b) {
  return (!a.is_unknown() && a == b) || (a.is_symbolic() && b.is_symbolic());
}
// The input ranks ONNX Runtime's Skip*LayerNormalization accept: (tokens, hidden) or (batch, sequence,
// hidden).
inline constexpr auto is_rank_2_or_3 = fact<"is_rank_2_or_3">(
    [](const ValueView& x) { return x.shape() && (x.shape()->size() == 2 || x.shape()->size() == 3); });
// An optional scale or bias: absent, or a vector as long as x's last dimension.
inline constexpr auto absent_or_vector_over_last_axis =
    fact<"absent_or_vector_over_last_axis">([](const ValueView& v, const ValueView& x) {
      if (v.id == ir::kNone) return true;
      return v.shape() && v.shape()->size() == 1 && x.shape() && !x.shape()->empty() &&
             (*v.shape())[0].is_static() && (*v.shape())[0] == x.shape()->back();
    });
// An addend that can be a Gemm's C: at most 2-D, and the sum has the product's shape (C broadcasts into
// the (M, N) product, never the product into C).
template <class Y, class P, class S>
constexpr auto fits_gemm_c(const Y& addend, const P& product, const S& sum) {
  return rewrite::rank(addend) <= 2 && rewrite::same_shape(sum, product);
}
// Same dims and element type: a constant that multiplies into a scale of that shape.
inline constexpr auto same_dims_and_type = fact<"same_dims_and_type">(
    [](const Tensor& a, const Tensor& b) { return a.dims() == b.dims() && a.type() == b.type(); });
inline bool is_identity_permutation(const std::vector<int64_t>& perm) {
  for (std::size_t k = 0; k < perm.size(); ++k)
    if (perm[k] != static_cast<int64_t>(k)) return false;
  return true;
}
inline constexpr auto is_identity_perm = fact<"is_identity_perm">(is_identity_permutation);
inline std::vector<int64_t> inverse_permutation(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inverse(perm.size());
  for (std::size_t k = 0; k < perm.size(); ++k)
    inverse[static_cast<std::size_t>(perm[k])] = static_cast<int64_t>(k);
  return inverse;
}
inline bool is_permutation_of_rank(const std::vector<int64_t>& perm, std::size_t rank) {
  if (perm.size() != rank) return false;
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[static_cast<std::size_t>(p)]) return false;
    seen[static_cast<std::size_t>(p)] = true;
  }
  return true;
}
// A permutation that swaps the last two axes and keeps the others (a matrix transposition).
inline constexpr auto swaps_last_two = fact<"swaps_last_two">([](const std::vector<int64_t>& perm) {
  const std::size_t r = perm.size();
  if (r < 2) return false;
  for (std::size_t k = 0; k + 2 < r; ++k)
    if (perm[k] != static_cast<int64_t>(k)) return false;
  return perm[r - 2] == static_cast<int64_t>(r - 1) && perm[r - 1] == static_cast<int64_t>(r - 2);
});

// r, a 2-D Reshape of a (rank 3 or more), keeps a's last axis: a's leading axes flattened into rows.
inline constexpr auto flattens_rows = fact<"flattens_rows">([](const ValueView& a, const ValueView& r) {
  using rewrite::facts::dim;
  return a.shape() && r.shape() && a.shape()->size() >= 3 && r.shape()->size() == 2 &&
         dim(*r.shape(), 1) == dim(*a.shape(), -1);
});
// `out` has a's leading axes and the product's last axis: the rows of the product given back a's shape.
inline constexpr auto restores_leading_axes =
    fact<"restores_leading_axes">([](const ValueView& out, const ValueView& a, const ValueView& product) {
      using rewrite::facts::KnownDim;
      if (!out.shape() || !a.shape() || !product.shape() || out.shape()->size() != a.shape()->size())
        return false;
      for (std::size_t k = 0; k + 1 < a.shape()->size(); ++k)
        if (!(KnownDim{(*out.shape())[k]} == KnownDim{(*a.shape())[k]})) return false;
      return KnownDim{out.shape()->back()} == KnownDim{product.shape()->back()};
    });

// ---- readers ----------------------------------------------------------------------------------------
// v is no graph output, something reads it, and every reader is one of `ops`, each written
// "domain.Op" outside the default domain ("MatMul", "com.microsoft.FusedMatMul"). Rules that take a
// shared value into flags of its readers check it: the value goes once the last reader has taken it.
inline bool read_only_by(const ValueView& v, std::initializer_list<std::string_view> ops) {
  if (v.value().is_graph_output() || v.value().uses.empty()) return false;
  for (const ir::Use& u : v.value().uses) {
    const ir::Node& n = v.graph->node(u.node);
    const std::string_view domain = n.domain.view(), op = n.op_type.view();
    const auto named = [&](std::string_view q) {
      return domain.empty() ? q == op
                            : q.size() == domain.size() + 1 + op.size() && q.starts_with(domain) &&
                                  q[domain.size()] == '.' && q.ends_with(op);
    };
    if (std::none_of(ops.begin(), ops.end(), named)) return false;
  }
  return true;
}

// ---- execution order --------------------------------------------------------------------------------
// Rules that rewrite several readers of one value x at once (a Split for its Slices, a TopK for a
// ReduceMax and an ArgMax) root themselves at the first of those readers and insert the new node there,
// before every reader of the values it replaces. `root` comes before every node of `others`: no node
// of them lies between x's producer (the graph start for an input) and the root.
inline bool first_in_order(const ir::Graph& g, ir::NodeId root, ir::ValueId x,
                           const std::vector<ir::NodeId>& others) {
  const ir::NodeId stop = g.value(x).producer;
  for (ir::NodeId k = g.node(root).prev; k != ir::kNone && k != stop; k = g.node(k).prev)
    if (std::find(others.begin(), others.end(), k) != others.end()) return false;
  return true;
}
// The readers of the root's first input x, at their first input, that `accepts` takes (it may record what it
// read of each): the root among them with at least one other, no other's first output a graph output (it
// would stay), the root first in order. Empty when one of these fails. SlicesSplit and GathersSplit start
// from it and end with replace_readers.
template <class Accept>
std::vector<ir::NodeId> sibling_readers(const ir::Graph& g, ir::NodeId root, Accept&& accepts) {
  const ir::ValueId x = g.node(root).inputs[0];
  std::vector<ir::NodeId> readers;
  std::vector<ir::NodeId> others;
  for (const ir::Use& u : g.value(x).uses) {
    if (u.slot != 0 || !accepts(u.node)) continue;
    if (u.node != root) {
      if (g.value(g.node(u.node).outputs[0]).is_graph_output()) return {};
      others.push_back(u.node);
    }
    readers.push_back(u.node);
  }
  if (others.empty() || others.size() == readers.size() || !first_in_order(g, root, x, others)) return {};
  return readers;
}
// Each reader's first output becomes fresh[k] (after the match, as the driver wants); the root's
// counterpart is returned for the driver to put in place of the root.
inline ir::ValueId replace_readers(rewrite::Rewriter& r, ir::NodeId root,
                                   const std::vector<ir::NodeId>& readers,
                                   const std::vector<ir::ValueId>& fresh) {
  ir::ValueId root_replacement = ir::kNone;
  for (std::size_t k = 0; k < readers.size(); ++k) {
    if (readers[k] == root)
      root_replacement = fresh[k];
    else
      r.replace_later(r.graph().node(readers[k]).outputs[0], fresh[k]);
  }
  return root_replacement;
}

// ---- computations on constants ----------------------------------------------------------------------
// Runs one default-domain op on constants (opset 18 semantics, stable for the ops used here).
inline Tensor compute(Symbol op_type, std::vector<std::optional<Tensor>> inputs,
                      const std::vector<ir::Attribute>& attributes = {}) {
  return eval::evaluate_op(op_type, {}, inputs, attributes, 18, 1).at(0);
}
// a * b, broadcast as ONNX Mul does (folded into a scale).
inline constexpr auto product = fact<"product">([](const Tensor& a, const Tensor& b) {
  return compute("Mul", {a, b});
});
// The parts joined along `axis`, as ONNX Concat does.
inline Tensor concatenated(const std::vector<const Tensor*>& parts, int64_t axis) {
  std::vector<std::optional<Tensor>> inputs;
  for (const Tensor* t : parts) inputs.emplace_back(*t);
  return compute("Concat", std::move(inputs), {ir::Attribute::make_int(Symbol("axis"), axis)});
}
inline Tensor int64_tensor(const std::vector<int64_t>& values) {
  return Tensor::from<int64_t>({static_cast<int64_t>(values.size())}, values);
}
// An optional computed by a fact: present? and its value (a fact returning nullopt declines).
inline constexpr auto has_value = fact<"has_value">([](const auto& v) { return v.has_value(); });
inline constexpr auto value_of = fact<"value">([](const auto& v) { return *v; });
inline constexpr auto as_tensor =
    fact<"as_tensor">([](const std::optional<std::vector<int64_t>>& v) { return int64_tensor(*v); });

}  // namespace xexp::patterns
