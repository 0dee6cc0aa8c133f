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
