#pragma once
// Facts on constants: integer lists (shapes, axes), single numbers, tensors equal everywhere, and small
// computations on constants done with the evaluator's kernels, so that every element type is handled as
// when the model runs.
#include <cmath>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

#include "xexp/eval/evaluate_op.hpp"
#include "xexp/eval/tensor_util.hpp"
#include "xexp/patterns/facts/types.hpp"

namespace xexp::patterns {

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
// The number of a constant of one element (is_scalar_constant), exactly:
// `scalar_value(lo) <= scalar_value(hi)`.
inline constexpr auto scalar_value =
    fact<"scalar_value">([](const ValueView& v) { return *scalar_constant(v); });
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

// ---- computations on constants ----------------------------------------------------------------------
// Runs one default-domain op on constants (opset 18 semantics, stable for the ops used here).
inline Tensor compute(Symbol op_type, std::vector<std::optional<Tensor>> inputs,
                      const std::vector<ir::Attribute>& attributes = {}) {
  return eval::evaluate_op(op_type, {}, inputs, attributes, 18, 1).at(0);
}
// The tensor of a constant value (a ValueView that is one), or the tensor itself.
inline const Tensor& tensor_of(const Tensor& t) { return t; }
inline const Tensor& tensor_of(const ValueView& v) { return *v.constant(); }
// a * b, broadcast as ONNX Mul does (folded into a scale); a may be a constant value.
inline constexpr auto product = fact<"product">([](const auto& a, const Tensor& b) {
  return compute("Mul", {tensor_of(a), b});
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

// ---- more facts on constants -------------------------------------------------------------------------
// c leaves x unchanged under an elementwise op whose neutral element is `value` (0 for Add, 1 for Mul):
// c is `value` everywhere, has x's type, and broadcasting with it keeps x's shape (no more axes than x,
// each 1 or x's size there).
inline constexpr auto is_neutral = fact<"is_neutral">([](const ValueView& x, const Tensor& c, double value) {
  if (!x.shape() || c.type() != x.elem() || c.rank() > x.shape()->size()) return false;
  const std::size_t offset = x.shape()->size() - c.rank();
  for (std::size_t k = 0; k < c.rank(); ++k)
    if (c.dims()[k] != 1 && (*x.shape())[offset + k] != Dim(c.dims()[k])) return false;
  return equal_everywhere(c, value);
});
// The first element of a constant is +inf or -inf.
inline constexpr auto is_infinite = fact<"is_infinite">([](const Tensor& t) {
  return t.size() >= 1 && t.type() != ElemType::String && std::isinf(eval::element_as_double(t, 0));
});
// Two int64 tensors holding the same values (two shapes that are one).
inline constexpr auto same_int64_values = fact<"same_int64_values">([](const Tensor& a, const Tensor& b) {
  return a.type() == ElemType::Int64 && b.type() == ElemType::Int64 && int_values(a) == int_values(b);
});
// The number of a one-element constant, as an integer attribute (ignore_index).
inline constexpr auto scalar_int =
    fact<"scalar_int">([](const Tensor& t) { return static_cast<int64_t>(eval::element_as_double(t, 0)); });
// c * d of two one-element constants, as one scalar of c's type.
inline constexpr auto scalar_product = fact<"scalar_product">([](const Tensor& c, const Tensor& d) {
  return eval::filled(c.type(), {}, eval::element_as_double(c, 0) * eval::element_as_double(d, 0));
});
// `value` as a scalar (shape ()) of x's type.
inline constexpr auto scalar_of_type = fact<"scalar_of_type">([](float value, const ValueView& x) {
  return eval::cast_tensor(Tensor::scalar<float>(value), x.elem());
});

// a + b, broadcast as ONNX Add does (folded into a bias); a may be a constant value.
inline constexpr auto sum = fact<"sum">([](const auto& a, const Tensor& b) {
  return compute("Add", {tensor_of(a), b});
});
// An optional input that is absent or a constant.
inline constexpr auto constant_or_absent =
    fact<"constant_or_absent">([](const ValueView& v) { return v.id == ir::kNone || v.constant(); });
// An optional input (a bias) that is absent or a constant of zeros.
inline constexpr auto absent_or_zero = fact<"absent_or_zero">([](const ValueView& v) {
  return v.id == ir::kNone || (v.constant() && equal_everywhere(*v.constant(), 0.0));
});
// `value` in x's type over x's dims from `axis` on (negative counts from the end), which are static: the
// scale (ones) or bias (zeros) a normalization over those axes writes.
inline constexpr auto filled_from = fact<"filled_from">([](const ValueView& x, int64_t axis, double value) {
  const auto rank = static_cast<int64_t>(x.shape()->size());
  std::vector<int64_t> dims;
  for (int64_t k = axis < 0 ? axis + rank : axis; k < rank; ++k)
    dims.push_back((*x.shape())[static_cast<std::size_t>(k)].value());
  return eval::filled(x.elem(), dims, value);
});
// Some element of a numeric tensor equals `value` (a shape holding 0, which Reshape reads as "copy").
inline constexpr auto contains_value = fact<"contains_value">([](const Tensor& t, double value) {
  if (t.type() == ElemType::String) return false;
  for (int64_t k = 0; k < t.size(); ++k)
    if (eval::element_as_double(t, k) == value) return true;
  return false;
});
// 1 in x's type, of shape (1,) (ConstantOfShape's value).
inline constexpr auto one_of_type =
    fact<"one_of_type">([](const ValueView& x) { return eval::filled(x.elem(), {1}, 1.0); });

}  // namespace xexp::patterns
