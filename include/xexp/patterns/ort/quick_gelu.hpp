#pragma once
// QuickGelu (onnxruntime set): a region computing x * Sigmoid(alpha * x), alpha any constant (1: SiLU,
// Swish; 1.702: CLIP's QuickGelu), is com.microsoft QuickGelu(x, alpha).
#include "xexp/patterns/activation_functions.hpp"
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr quick_gelu_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Float<'a'> alpha;
  return rule("QuickGelu")
      .priority(1)
      .match(computes(fn::quick_gelu, x, alpha))
      .when(is_activation_float(x))
      .to(op<"QuickGelu", "com.microsoft">(x, attr<"alpha"> = alpha));
}

}  // namespace xexp::patterns
