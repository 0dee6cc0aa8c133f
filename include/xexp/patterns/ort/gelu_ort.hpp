#pragma once
// GeluOrt (onnxruntime set): a region computing the tanh Gelu,
//   0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
// however written (Pow(x, 3) or x * x * x, factored as x * (1 + 0.044715 * x * x), the 0.5 anywhere, a
// Sigmoid of twice the argument), becomes com.microsoft FastGelu(x), which computes exactly that function
// (com.microsoft Gelu is always the erf form: it has no `approximate` attribute, and ONNX Runtime refuses
// a model that sets one).
#include "xexp/patterns/activation_functions.hpp"
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr gelu_ort_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  return rule("GeluOrt")
      .match(computes(fn::gelu_tanh, x))
      .when(is_activation_float(x))
      .to(op<"FastGelu", "com.microsoft">(x));
}

}  // namespace xexp::patterns
