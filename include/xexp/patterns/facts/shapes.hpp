#pragma once
// Facts on shapes: dimensions known equal, static dims, axes, permutations, broadcasting.
#include <cstdint>
#include <optional>
#include <vector>

#include "xexp/patterns/facts/types.hpp"

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

}  // namespace xexp::patterns
