#pragma once
// GeluErf (onnxruntime set): the exact Gelu as exporters decompose it,
//   0.5 * x * (1 + Erf(x / sqrt(2)))
// with the 0.5 applied last (torch) or first, becomes com.microsoft Gelu(x) (valid at any opset).
#include "xexp/patterns/activation_constants.hpp"
#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

namespace detail {
// The two shapes of the decomposition around `x` (a capture, or a named node when BiasGelu matches it
// on an Add): (x * (Erf(x / s) + o)) * h and (x * h) * (Erf(x / s) + o). The Erf part comes first so
// that it binds x: a commutative node does not revisit its choice when a sibling fails later, and
// Mul(x, h) tried first would bind x to the constant of Mul(0.5, x).
template <class X, class S, class O, class H>
auto erf_gelu_half_last(const X& x, const S& s, const O& o, const H& h) {
  using namespace rewrite::dsl;
  return commutative(Mul(commutative(Mul(commutative(Add(op<"Erf">(Div(x, s)), o)), x)), h));
}
template <class X, class S, class O, class H>
auto erf_gelu_half_first(const X& x, const S& s, const O& o, const H& h) {
  using namespace rewrite::dsl;
  return commutative(Mul(commutative(Add(op<"Erf">(Div(x, s)), o)), commutative(Mul(x, h))));
}
template <class S, class O, class H>
auto erf_gelu_constants(const S& s, const O& o, const H& h) {
  using namespace rewrite::dsl;
  return call("is_sqrt2", is_sqrt2, s) && call("is_one", [](const ValueView& v) { return scalar_is(v, 1); }, o) &&
         call("is_half", [](const ValueView& v) { return scalar_is(v, 0.5); }, h);
}
}  // namespace detail

inline rewrite::RulePtr gelu_erf_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'s'> sqrt2;
  Var<'o'> one;
  Var<'h'> half;
  auto fits = detail::erf_gelu_constants(sqrt2, one, half) &&
              call("is_activation_float", detail::is_activation_float, dtype(x));
  auto gelu = op<"Gelu", "com.microsoft">(x);
  return rule("GeluErf").priority(0).cases(
      match(detail::erf_gelu_half_last(x, sqrt2, one, half)).when(fits).to(gelu),
      match(detail::erf_gelu_half_first(x, sqrt2, one, half)).when(fits).to(gelu));
}

}  // namespace xexp::patterns
