#pragma once
// BiasGelu (onnxruntime set): an exact (erf) Gelu of x + B, B a constant vector over the last axis,
// becomes com.microsoft BiasGelu(x, B). It matches the decomposition and also the Gelu GeluErf (P0)
// already made of it, which the original missed: with both rules in a set, GeluErf runs first and the
// decomposition is gone by the time BiasGelu (P1) is tried.
#include "xexp/patterns/ort/gelu_erf.hpp"
#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr bias_gelu_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Const<'b'> bias;
  Var<'s'> sqrt2;
  Var<'o'> one;
  Var<'h'> half;
  auto sum = named<'a'>(commutative(Add(x, bias)));
  auto fits = rank(bias) == 1 && dim(bias, 0) == dim(x, -1) &&
              call("is_activation_float", detail::is_activation_float, dtype(x));
  auto erf_fits = fits && detail::erf_gelu_constants(sqrt2, one, half);
  auto fused = op<"BiasGelu", "com.microsoft">(x, bias);
  return rule("BiasGelu").priority(1).cases(
      match(op<"Gelu", "com.microsoft">(sum)).when(fits).to(fused),
      match(op<"Gelu">(sum, attr<"approximate"> = "none")).when(fits).to(fused),
      match(detail::erf_gelu_half_last(sum, sqrt2, one, half)).when(erf_fits).to(fused),
      match(detail::erf_gelu_half_first(sum, sqrt2, one, half)).when(erf_fits).to(fused));
}

}  // namespace xexp::patterns
