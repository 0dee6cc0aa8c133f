#pragma once
// Gelu: the tanh approximation written out, x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))), 8 nodes,
// is ONNX Gelu(approximate="tanh") (opset >= 20). Each constant may be the float32 value or its float16
// rounding (0.044708251953125, 0.7978515625): see facts.hpp.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr gelu_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'a'> three;
  Var<'b'> cubic;
  Var<'c'> sqrt_2_pi;
  Var<'d'> one;
  Var<'e'> half;
  auto inner = commutative(Add(x, commutative(Mul(Pow(x, three), cubic))));
  auto tanh1 = commutative(Add(op<"Tanh">(commutative(Mul(inner, sqrt_2_pi))), one));
  return rule("Gelu")
      .match(commutative(Mul(commutative(Mul(x, half)), tanh1)))
      .when(opset_at_least(20) && scalar_is(three, 3.0) && is_gelu_cubic_coefficient(cubic) &&
            is_sqrt_2_over_pi(sqrt_2_pi) && scalar_is(one, 1.0) && scalar_is(half, 0.5))
      .to(op<"Gelu">(x, attr<"approximate"> = "tanh"));
}

}  // namespace xexp::patterns
