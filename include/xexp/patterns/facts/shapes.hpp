#pragma once
// Facts on shapes: dimensions known equal, static dims, axes, permutations, broadcasting.
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "xexp/infer/broadcast.hpp"
#include "xexp/patterns/facts/constants.hpp"

namespace xexp::patterns {

// Two dimensions known to be equal: the same size or the same symbol, never two unknown ones.
inline bool same_dim(const Dim& a, const Dim& b) {
  return rewrite::facts::KnownDim{a} == rewrite::facts::KnownDim{b};
}

// ---- shapes and axes --------------------------------------------------------------------------------
// Static dims of a value's shape, or nullopt.
inline std::optional<std::vector<int64_t>> static_dims_of(const ValueView& v) {
  if (!v.shape()) return std::nullopt;
  return static_dims(*v.shape());
}
// A dimension of v (negative axes count from the end), compared as rewrite::facts::dim does.
using rewrite::facts::KnownDim;
inline KnownDim dim_of(const ValueView& v, int64_t axis) { return rewrite::facts::dim(*v.shape(), axis); }
inline bool has_rank(const ValueView& v, std::size_t rank) { return v.shape() && v.shape()->size() == rank; }
// The size of axis (negative: from the end) when static, else -1.
inline int64_t static_dim(const ValueView& v, int64_t axis) {
  if (axis < 0) axis += static_cast<int64_t>(v.shape()->size());
  const Dim d = (*v.shape())[static_cast<std::size_t>(axis)];
  return d.is_static() ? d.value() : -1;
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
// Every input of the node producing v has shape (1,): the one-number parts a shape is assembled from.
inline constexpr auto parts_are_single = fact<"parts_are_single">([](const ValueView& v) {
  for (ir::ValueId part : rewrite::node_of(v).inputs) {
    const std::optional<Shape>& s = v.graph->value(part).shape;
    if (!s || s->size() != 1 || !((*s)[0] == Dim(1))) return false;
  }
  return true;
});
// `axis` counted from 0 in x's rank (a negative one from the end), as written when x's rank is unknown:
// two axes of one value compare as `axis_in(a, x) == axis_in(b, x)`.
inline constexpr auto axis_in = fact<"axis_in">([](int64_t axis, const ValueView& x) {
  return axis < 0 && x.shape() ? axis + static_cast<int64_t>(x.shape()->size()) : axis;
});
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

// ---- more facts on shapes ----------------------------------------------------------------------------
// v's shape is static and holds one element (any rank).
inline constexpr auto has_one_element = fact<"has_one_element">(
    [](const ValueView& v) { return v.shape() && is_static(*v.shape()) && element_count(*v.shape()) == 1; });
// v's shape is known and static.
inline constexpr auto has_static_shape =
    fact<"has_static_shape">([](const ValueView& v) { return static_dims_of(v).has_value(); });
// v's static shape as an int64 tensor (a Reshape's target).
inline constexpr auto static_shape_of =
    fact<"static_shape_of">([](const ValueView& v) { return int64_tensor(*static_dims_of(v)); });
// x's dims are static and equal the int64 constant `shape` (a Reshape or Expand to it changes nothing).
inline constexpr auto same_static_dims =
    fact<"same_static_dims">([](const ValueView& x, const Tensor& shape) {
      auto dims = static_dims_of(x);
      return dims && shape.type() == ElemType::Int64 && int_values(shape) == dims;
    });
// Transpose(Transpose(x, first), second) is Transpose(x, composed_perm(first, second)):
// composed[i] = first[second[i]].
inline constexpr auto composed_perm =
    fact<"composed_perm">([](const std::vector<int64_t>& first, const std::vector<int64_t>& second) {
      std::vector<int64_t> out;
      for (int64_t axis : second)
        out.push_back(axis >= 0 && axis < static_cast<int64_t>(first.size()) ? first[axis] : axis);
      return out;
    });
// Every axis of x but the channels (axis 1): what per-channel statistics reduce.
inline constexpr auto all_but_channels = fact<"all_but_channels">([](const ValueView& x) {
  std::vector<int64_t> axes{0};
  for (int64_t k = 2; k < static_cast<int64_t>(x.shape()->size()); ++k) axes.push_back(k);
  return axes;
});
// (1, -1, 1, ...) of x's rank: the Reshape target of a per-channel vector made to broadcast against x.
inline constexpr auto per_channel_shape = fact<"per_channel_shape">([](const ValueView& x) {
  std::vector<int64_t> shape(x.shape()->size(), 1);
  shape[1] = -1;
  return int64_tensor(shape);
});

// A value of the static dims and element type of `like` (a value or a constant's tensor), whatever its
// content.
inline constexpr auto shaped_like = fact<"shaped_like">([](const ValueView& v, const auto& like) {
  const auto dims = static_dims_of(v);
  if constexpr (std::is_same_v<std::decay_t<decltype(like)>, Tensor>)
    return dims && *dims == like.dims() && v.elem() == like.type();
  else
    return dims && dims == static_dims_of(like) && v.elem() == like.elem();
});
// x's last dimension is known and static.
inline constexpr auto has_static_last_dim = fact<"has_static_last_dim">(
    [](const ValueView& x) { return x.shape() && !x.shape()->empty() && x.shape()->back().is_static(); });
// The first of `axes` when they are x's trailing axes (in any order, negative ones counted from the end)
// and those dims are static; else -1.
inline constexpr auto first_trailing_axis =
    fact<"first_trailing_axis">([](const ValueView& x, const std::vector<int64_t>& axes) -> int64_t {
      if (axes.empty() || !x.shape()) return -1;
      const auto rank = static_cast<int64_t>(x.shape()->size());
      std::vector<int64_t> sorted;
      for (int64_t a : axes) sorted.push_back(a < 0 ? a + rank : a);
      std::sort(sorted.begin(), sorted.end());
      for (std::size_t k = 0; k < sorted.size(); ++k)
        if (sorted[k] != rank - static_cast<int64_t>(sorted.size() - k) ||
            !(*x.shape())[sorted[k]].is_static())
          return -1;
      return sorted.front();
    });
// [-1, k]: a Reshape target flattening a (static last dim k) into rows.
inline constexpr auto rows_shape = fact<"rows_shape">([](const ValueView& a) {
  return Tensor::from<int64_t>({2}, {-1, a.shape()->back().value()});
});
// [d0, ..., d(r-2), -1]: a Reshape target giving rows back a's leading axes (static).
inline constexpr auto leading_axes_shape = fact<"leading_axes_shape">([](const ValueView& a) {
  std::vector<int64_t> dims;
  for (std::size_t k = 0; k + 1 < a.shape()->size(); ++k) dims.push_back((*a.shape())[k].value());
  dims.push_back(-1);
  return int64_tensor(dims);
});
// {k}: `reshaped` is x's shape with a 1 inserted at axis k (an Unsqueeze of k); {} when there is no such
// axis.
inline constexpr auto inserted_axis =
    fact<"inserted_axis">([](const ValueView& x, const ValueView& reshaped) -> std::vector<int64_t> {
      if (!x.shape() || !reshaped.shape() || reshaped.shape()->size() != x.shape()->size() + 1) return {};
      const Shape& in = *x.shape();
      const Shape& out = *reshaped.shape();
      for (std::size_t k = 0; k < out.size(); ++k) {
        if (!(out[k] == Dim(1))) continue;
        bool fits = true;
        for (std::size_t j = 0; j < in.size() && fits; ++j) fits = same_dim(in[j], out[j < k ? j : j + 1]);
        if (fits) return {static_cast<int64_t>(k)};
      }
      return {};
    });
// The constant Reshape target keeps t's last two axes (static and positive) and has rank 2 or more.
inline constexpr auto keeps_last_two_axes =
    fact<"keeps_last_two_axes">([](const ValueView& t, const Tensor& shape) {
      const std::optional<std::vector<int64_t>> s = int_values(shape);
      if (!s || s->size() < 2 || !t.shape() || t.shape()->size() < 2) return false;
      const Shape& d = *t.shape();
      const Dim rows = d[d.size() - 2], cols = d.back();
      return rows.is_static() && cols.is_static() && rows.value() > 0 && cols.value() > 0 &&
             (*s)[s->size() - 2] == rows.value() && s->back() == cols.value();
    });
// A shape with its last two dims swapped (the shape of a matrix transposition's result).
inline constexpr auto last_two_swapped = fact<"last_two_swapped">([](const Tensor& shape) {
  std::vector<int64_t> s = *int_values(shape);
  std::swap(s[s.size() - 2], s[s.size() - 1]);
  return int64_tensor(s);
});
// The permutation swapping the last two axes of a shape's rank (a matrix transposition).
inline constexpr auto matrix_transpose_perm = fact<"matrix_transpose_perm">([](const Tensor& shape) {
  std::vector<int64_t> perm;
  for (int64_t k = 0; k < shape.size(); ++k) perm.push_back(k);
  std::swap(perm[perm.size() - 2], perm[perm.size() - 1]);
  return perm;
});

// ---- broadcasting -----------------------------------------------------------------------------------
// Broadcasting aligns ranks on the right: the dimension of s facing axis k of a rank-`out_rank` result,
// nullptr where s lacks that axis (it counts as 1).
inline const Dim* aligned_dim(const Shape& s, std::size_t k, std::size_t out_rank) {
  return k + s.size() < out_rank ? nullptr : &s[k + s.size() - out_rank];
}
// Axis k of `out` comes out of broadcasting the operands: one of them has that dimension (known, the
// same size or symbol), or it is 1.
inline bool gives_axis(const Shape& out, std::size_t k, std::initializer_list<const Shape*> operands) {
  using rewrite::facts::KnownDim;
  for (const Shape* s : operands)
    if (const Dim* d = aligned_dim(*s, k, out.size()); d && KnownDim{*d} == KnownDim{out[k]}) return true;
  return KnownDim{out[k]} == 1;
}
// Broadcasting the operands gives exactly `out`'s shape: each operand's dimension is 1 or out's, and
// each axis of out comes from one of them. Shapes known; symbolic dimensions compare by name.
inline bool broadcast_gives(const Shape& out, std::initializer_list<const Shape*> operands) {
  using rewrite::facts::KnownDim;
  for (const Shape* s : operands)
    if (s->size() > out.size()) return false;
  for (std::size_t k = 0; k < out.size(); ++k) {
    for (const Shape* s : operands)
      if (const Dim* d = aligned_dim(*s, k, out.size());
          d && !(KnownDim{*d} == KnownDim{out[k]} || KnownDim{*d} == 1))
        return false;
    if (!gives_axis(out, k, operands)) return false;
  }
  return true;
}
// The element count of the broadcast of a and b, static shapes; -1 when a shape is not static or they do
// not broadcast.
inline constexpr auto broadcast_size = fact<"broadcast_size">([](const ValueView& a, const ValueView& b) {
  if (!a.shape() || !b.shape() || !is_static(*a.shape()) || !is_static(*b.shape())) return int64_t{-1};
  infer::ShapeConstraints constraints;
  try {
    return element_count(infer::broadcast_shapes(*a.shape(), *b.shape(), constraints));
  } catch (const Error&) {
    return int64_t{-1};
  }
});
// `out` is what broadcasting the operands gives (Binary(x, y) or Where(c, x, y) without their Expands).
inline constexpr auto is_broadcast_of =
    fact<"is_broadcast_of">([](const ValueView& out, const auto&... operands) {
      if (!out.shape() || !(operands.shape() && ...)) return false;
      return broadcast_gives(*out.shape(), {&*operands.shape()...});
    });
// Broadcasting a against b gives fewer elements than `out`: a dimension of out neither operand has.
inline constexpr auto broadcast_is_smaller =
    fact<"broadcast_is_smaller">([](const ValueView& a, const ValueView& b, const ValueView& out) {
      if (!a.shape() || !b.shape() || !out.shape()) return false;
      for (std::size_t k = 0; k < out.shape()->size(); ++k)
        if (!gives_axis(*out.shape(), k, {&*a.shape(), &*b.shape()})) return true;
      return false;
    });

}  // namespace xexp::patterns
