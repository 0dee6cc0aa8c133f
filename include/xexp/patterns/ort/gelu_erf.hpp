#pragma once
// GeluErf (onnxruntime set): the exact Gelu as exporters decompose it,
//   0.5 * x * (1 + Erf(x / sqrt(2)))
// with the 0.5 applied last (torch) or first, becomes com.microsoft Gelu(x) (valid at any opset).
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

inline rewrite::RulePtr gelu_erf_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'s'> sqrt2;
  Var<'o'> one;
  Var<'h'> half;
  return rule("GeluErf")
      .match(detail::erf_gelu(x, sqrt2, one, half))
      .when(detail::erf_gelu_constants(sqrt2, one, half) && is_activation_float(x))
      .to(op<"Gelu", "com.microsoft">(x));
}

}  // namespace xexp::patterns
