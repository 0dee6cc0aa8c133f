#pragma once
// Gelu: the tanh approximation written out, x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))), 8 nodes,
// is ONNX Gelu(approximate="tanh") (opset >= 20). Each constant may be the float32 value or its float16
// rounding (0.044708251953125, 0.7978515625): see facts.hpp. The exact Gelu written out,
// 0.5 * x * (1 + Erf(x / sqrt(2))), 5 nodes, is ONNX Gelu(approximate="none"), written out: libonnx 1.12
// has no Gelu schema to read the default from, and BiasGelu reads the attribute.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace detail {
// The decomposition around `x` (a capture, or a named node when BiasGelu matches it on an Add), with
// the 0.5 applied last, (x * (Erf(x / s) + o)) * h, or first, (x * h) * (Erf(x / s) + o).
template <class X, class S, class O, class H>
auto erf_gelu(const X& x, const S& s, const O& o, const H& h) {
  using namespace rewrite::dsl;
  auto one_plus_erf = commutative(Add(op<"Erf">(Div(x, s)), o));
  return either(commutative(Mul(commutative(Mul(one_plus_erf, x)), h)),
                commutative(Mul(one_plus_erf, commutative(Mul(x, h)))));
}
template <class S, class O, class H>
auto erf_gelu_constants(const S& s, const O& o, const H& h) {
  return is_sqrt2(s) && scalar_is(o, 1.0) && scalar_is(h, 0.5);
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
  Var<'f'> sqrt2;
  auto inner = commutative(Add(x, commutative(Mul(Pow(x, three), cubic))));
  auto tanh1 = commutative(Add(op<"Tanh">(commutative(Mul(inner, sqrt_2_pi))), one));
  return rule("Gelu").cases(
      match(commutative(Mul(commutative(Mul(x, half)), tanh1)))
          .when(opset_at_least(20) && scalar_is(three, 3.0) && is_gelu_cubic_coefficient(cubic) &&
                is_sqrt_2_over_pi(sqrt_2_pi) && scalar_is(one, 1.0) && scalar_is(half, 0.5))
          .to(op<"Gelu">(x, attr<"approximate"> = "tanh")),
      // Erf also takes integers; Gelu's type constraint is the normalizations' float types.
      match(detail::erf_gelu(x, sqrt2, one, half))
          .when(opset_at_least(20) && detail::erf_gelu_constants(sqrt2, one, half) &&
                is_normalization_float(x))
          .to(op<"Gelu">(x, attr<"approximate"> = "none")));
}

}  // namespace xexp::patterns
