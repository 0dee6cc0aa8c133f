#pragma once
// QuickGelu (onnxruntime set): x * Sigmoid(x) (SiLU, Swish) is com.microsoft QuickGelu(x, alpha=1),
// which computes x * Sigmoid(alpha * x). The Sigmoid must have no other consumer.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr quick_gelu_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  return rule("QuickGelu")
      .priority(1)
      .match(commutative(Mul(x, op<"Sigmoid">(x))))
      .when(is_activation_float(x))
      .to(op<"QuickGelu", "com.microsoft">(x, attr<"alpha"> = 1.0f));
}

}  // namespace xexp::patterns
