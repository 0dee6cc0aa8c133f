#pragma once
// A user-defined fusion: x * Sigmoid(x) (SiLU/Swish) becomes ONNX Runtime's QuickGelu(x, alpha=1).
#include <xexp/rewrite/dsl.hpp>

inline xexp::rewrite::RulePtr quick_gelu_rule() {
  using namespace xexp::rewrite::dsl;
  Var<'x'> x;
  return rule("QuickGeluFusion")
      .priority(1)
      .match(commutative(Mul(x, op<"Sigmoid">(x))))
      .to(op<"QuickGelu", "com.microsoft">(x, attr<"alpha"> = 1.0f));
}
