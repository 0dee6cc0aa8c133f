#pragma once
// GeluOrt (onnxruntime set): the tanh Gelu as exporters decompose it,
//   0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
// becomes com.microsoft FastGelu(x), which computes exactly that formula. The original produced
// com.microsoft Gelu with approximate="tanh", an attribute that op does not have (ONNX Runtime refuses
// the model: com.microsoft Gelu is always the erf form).
#include "xexp/patterns/activation_constants.hpp"
#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr gelu_ort_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'p'> three;
  Var<'c'> cubic;
  Var<'k'> scale;
  Var<'o'> one;
  Var<'h'> half;
  auto inner = commutative(Mul(commutative(Add(x, commutative(Mul(Pow(x, three), cubic)))), scale));
  auto one_plus_tanh = commutative(Add(op<"Tanh">(inner), one));
  auto fits = call("is_three", [](const ValueView& v) { return detail::scalar_is(v, 3); }, three) &&
              call("is_cubic_coefficient", detail::is_gelu_cubic_coefficient, cubic) &&
              call("is_sqrt_2_over_pi", detail::is_sqrt_2_over_pi, scale) &&
              call("is_one", [](const ValueView& v) { return detail::scalar_is(v, 1); }, one) &&
              call("is_half", [](const ValueView& v) { return detail::scalar_is(v, 0.5); }, half) &&
              call("is_activation_float", detail::is_activation_float, dtype(x));
  auto fast = op<"FastGelu", "com.microsoft">(x);
  // The Tanh part first: it binds x (see erf_gelu_half_last).
  return rule("GeluOrt").priority(0).cases(
      match(commutative(Mul(one_plus_tanh, commutative(Mul(x, half))))).when(fits).to(fast),
      match(commutative(Mul(commutative(Mul(one_plus_tanh, x)), half))).when(fits).to(fast));
}

}  // namespace xexp::patterns
