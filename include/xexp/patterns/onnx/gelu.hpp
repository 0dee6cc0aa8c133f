#pragma once
// Gelu: the tanh approximation written out, x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))), 8 nodes,
// is ONNX Gelu(approximate="tanh") (opset >= 20). The original compared the constants exactly with their
// float16 roundings (0.044708251953125, 0.7978515625), so float32 models never matched; here each
// constant may be off by a float16 rounding.
#include <cmath>
#include <numbers>

#include "xexp/patterns/constant_facts.hpp"
#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

namespace detail {
// A constant scalar within `relative` of `expected` (0: exactly).
inline bool scalar_near(const rewrite::ValueView& v, double expected, double relative) {
  std::optional<double> c = scalar_constant(v);
  return c && std::abs(*c - expected) <= std::abs(expected) * relative;
}
}  // namespace detail

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
  auto exactly = [](auto v, double expected) { return call("scalar_is", detail::scalar_near, v, expected, 0.0); };
  // float16 rounds to 11 significant bits.
  auto near = [](auto v, double expected) { return call("scalar_near", detail::scalar_near, v, expected, 0x1p-11); };
  return rule("Gelu")
      .priority(0)
      .match(commutative(Mul(commutative(Mul(x, half)), tanh1)))
      .when(opset_at_least(20) && exactly(three, 3.0) && near(cubic, 0.044715) &&
            near(sqrt_2_pi, std::sqrt(2.0 / std::numbers::pi)) && exactly(one, 1.0) && exactly(half, 0.5))
      .to(op<"Gelu">(x, attr<"approximate"> = "tanh"));
}

}  // namespace xexp::patterns
