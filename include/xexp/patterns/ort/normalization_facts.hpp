#pragma once
// What the normalization fusions of the onnxruntime set check and compute.
#include <cstdint>
#include <vector>

#include "xexp/eval/evaluate_op.hpp"
#include "xexp/eval/tensor_util.hpp"
#include "xexp/rewrite/match.hpp"

namespace xexp::patterns::detail {

// Float types the normalization kernels take (type constraint T of their schemas).
inline bool is_normalization_float(ElemType t) {
  return t == ElemType::Float || t == ElemType::Double || t == ElemType::Float16 || t == ElemType::BFloat16;
}
// `axis` (negative counts from the end) is the last axis of x, whose rank is known.
inline bool is_last_axis(int64_t axis, const rewrite::ValueView& x) {
  if (!x.shape()) return false;
  const auto rank = static_cast<int64_t>(x.shape()->size());
  return rank > 0 && (axis == -1 || axis == rank - 1);
}
inline bool is_last_axis_only(const std::vector<int64_t>& axes, const rewrite::ValueView& x) {
  return axes.size() == 1 && is_last_axis(axes[0], x);
}
// The input ranks Skip*LayerNormalization accepts: (tokens, hidden) or (batch, sequence, hidden).
inline bool is_rank_2_or_3(const rewrite::ValueView& x) {
  return x.shape() && (x.shape()->size() == 2 || x.shape()->size() == 3);
}
// An optional scale or bias: absent, or a vector as long as x's last dimension.
inline bool absent_or_vector_over_last_axis(const rewrite::ValueView& v, const rewrite::ValueView& x) {
  if (v.id == ir::kNone) return true;
  return v.shape() && v.shape()->size() == 1 && x.shape() && !x.shape()->empty() && (*v.shape())[0].is_static() &&
         (*v.shape())[0] == x.shape()->back();
}
// A constant of one element, as a float attribute (epsilon).
inline bool is_scalar_constant(const rewrite::ValueView& v) {
  const Tensor* t = v.constant();
  return t && t->size() == 1 && t->type() != ElemType::String;
}
inline float scalar_value(const rewrite::ValueView& v) {
  return static_cast<float>(eval::element_as_double(*v.constant(), 0));
}
// Same dims and element type: a constant that can be multiplied into a scale of that shape.
inline bool same_scale_shape(const Tensor& a, const Tensor& b) { return a.dims() == b.dims() && a.type() == b.type(); }
inline Tensor product(const Tensor& a, const Tensor& b) {
  return eval::evaluate_op(Symbol("Mul"), {}, {a, b}, {}, 18, 1).at(0);
}

}  // namespace xexp::patterns::detail
