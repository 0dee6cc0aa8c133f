#pragma once
// GeluErf (onnxruntime set): a region computing the exact Gelu, 0.5 * x * (1 + Erf(x / sqrt(2))) however
// written, becomes com.microsoft Gelu(x) (valid at any opset; the default set's Gelu makes ONNX's Gelu of
// it from opset 20). Never FastGelu: the tanh approximation differs by up to 4.7e-4.
#include "xexp/patterns/activation_functions.hpp"
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr gelu_erf_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  return rule("GeluErf")
      .match(computes(fn::gelu, x))
      .when(is_activation_float(x))
      .to(op<"Gelu", "com.microsoft">(x));
}

}  // namespace xexp::patterns
