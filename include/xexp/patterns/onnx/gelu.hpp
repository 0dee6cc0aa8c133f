#pragma once
// Gelu: the tanh approximation written out, x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))), 8 nodes,
// is ONNX Gelu(approximate="tanh") (opset >= 20). The original compared the constants exactly with their
// float16 roundings (0.044708251953125, 0.7978515625), so float32 models never matched; here each
// constant may be off by a float16 rounding.
#include "xexp/patterns/activation_constants.hpp"
#include "xexp/rewrite/dsl.hpp"

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
  auto exactly = [](auto v, double expected) { return call("scalar_is", detail::scalar_is, v, expected); };
  return rule("Gelu")
      .priority(0)
      .match(commutative(Mul(commutative(Mul(x, half)), tanh1)))
      .when(opset_at_least(20) && exactly(three, 3.0) &&
            call("is_gelu_cubic_coefficient", detail::is_gelu_cubic_coefficient, cubic) &&
            call("is_sqrt_2_over_pi", detail::is_sqrt_2_over_pi, sqrt_2_pi) && exactly(one, 1.0) &&
            exactly(half, 0.5))
      .to(op<"Gelu">(x, attr<"approximate"> = "tanh"));
}

}  // namespace xexp::patterns
