#pragma once
// What the activation fusions (Gelu of the default set, the onnxruntime set's) check on the constants
// of a decomposition.
// Exporters write float32 constants, or constants rounded to float16 when the model is in half
// precision (sqrt(2) is then 1.4140625): a constant matches when it holds one number within a tolerance
// of the exact value, wide enough for those roundings and far narrower than any other formula.
#include <cmath>
#include <numbers>

#include "xexp/eval/tensor_util.hpp"
#include "xexp/rewrite/match.hpp"

namespace xexp::patterns::detail {

// A constant of one element (shape (), (1,), (1,1)...) within `tolerance` of `exact`.
inline bool scalar_near(const rewrite::ValueView& v, double exact, double tolerance) {
  const Tensor* t = v.constant();
  if (!t || t->size() != 1 || t->type() == ElemType::String) return false;
  return std::abs(eval::element_as_double(*t, 0) - exact) <= tolerance;
}
inline bool scalar_is(const rewrite::ValueView& v, double exact) { return scalar_near(v, exact, 0); }

// erf Gelu: x / sqrt(2); float16 rounds sqrt(2) to 1.4140625 (1.5e-4 away).
inline bool is_sqrt2(const rewrite::ValueView& v) { return scalar_near(v, std::numbers::sqrt2, 1e-3); }
// tanh Gelu: sqrt(2/pi) * (x + 0.044715 x^3); float16 writes 0.7978515625 and 0.044708251953125.
inline bool is_sqrt_2_over_pi(const rewrite::ValueView& v) {
  return scalar_near(v, std::numbers::sqrt2 / std::sqrt(std::numbers::pi), 1e-4);
}
inline bool is_gelu_cubic_coefficient(const rewrite::ValueView& v) { return scalar_near(v, 0.044715, 1e-5); }

// The element types ONNX Runtime has com.microsoft activation kernels for (float everywhere, the half
// types on GPUs); not double, which its CPU kernels lack.
inline bool is_activation_float(ElemType t) {
  return t == ElemType::Float || t == ElemType::Float16 || t == ElemType::BFloat16;
}

}  // namespace xexp::patterns::detail
