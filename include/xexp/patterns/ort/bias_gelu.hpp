#pragma once
// BiasGelu (onnxruntime set): an exact (erf) Gelu of x + B, B a constant vector over the last axis,
// becomes com.microsoft BiasGelu(x, B). It matches a region computing the Gelu of the sum and also the
// Gelu GeluErf (P0) already made of it: with both rules in a set, GeluErf runs first and the region is
// gone by the time BiasGelu (P1) is tried.
#include "xexp/patterns/activation_functions.hpp"
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr bias_gelu_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Const<'b'> bias;
  auto sum = commutative(Add(x, bias));
  auto fits = rank(bias) == 1 && dim(bias, 0) == dim(x, -1) && is_activation_float(x);
  return rule("BiasGelu")
      .priority(1)
      .match(either(either(op<"Gelu", "com.microsoft">(sum), Gelu(sum, attr<"approximate"> = "none")),
                    computes(fn::gelu, sum)))
      .when(fits)
      .to(op<"BiasGelu", "com.microsoft">(x, bias));
}

}  // namespace xexp::patterns
