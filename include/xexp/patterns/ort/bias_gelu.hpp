#pragma once
// BiasGelu (onnxruntime set): an exact (erf) Gelu of x + B, B a constant vector over the last axis,
// becomes com.microsoft BiasGelu(x, B). It matches the decomposition and also the Gelu GeluErf (P0)
// already made of it: with both rules in a set, GeluErf runs first and the decomposition is gone by the
// time BiasGelu (P1) is tried.
#include "xexp/patterns/ort/gelu_erf.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr bias_gelu_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Const<'b'> bias;
  Var<'s'> sqrt2;
  Var<'o'> one;
  Var<'h'> half;
  auto sum = named<'a'>(commutative(Add(x, bias)));
  auto fits = rank(bias) == 1 && dim(bias, 0) == dim(x, -1) && is_activation_float(x);
  auto fused = op<"BiasGelu", "com.microsoft">(x, bias);
  return rule("BiasGelu")
      .priority(1)
      .cases(match(either(op<"Gelu", "com.microsoft">(sum), op<"Gelu">(sum, attr<"approximate"> = "none")))
                 .when(fits)
                 .to(fused),
             match(detail::erf_gelu(sum, sqrt2, one, half))
                 .when(fits && detail::erf_gelu_constants(sqrt2, one, half))
                 .to(fused));
}

}  // namespace xexp::patterns
