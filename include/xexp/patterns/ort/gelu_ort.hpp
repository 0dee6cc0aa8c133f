#pragma once
// GeluOrt (onnxruntime set): the tanh Gelu as exporters decompose it,
//   0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
// becomes com.microsoft FastGelu(x), which computes exactly that formula (com.microsoft Gelu is always
// the erf form: it has no `approximate` attribute, and ONNX Runtime refuses a model that sets one).
#include "xexp/patterns/facts.hpp"

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
  return rule("GeluOrt")
      .match(either(commutative(Mul(one_plus_tanh, commutative(Mul(x, half)))),
                    commutative(Mul(commutative(Mul(one_plus_tanh, x)), half))))
      .when(scalar_is(three, 3.0) && is_gelu_cubic_coefficient(cubic) && is_sqrt_2_over_pi(scale) &&
            scalar_is(one, 1.0) && scalar_is(half, 0.5) && is_activation_float(x))
      .to(op<"FastGelu", "com.microsoft">(x));
}

}  // namespace xexp::patterns
