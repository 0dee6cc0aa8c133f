#pragma once
// FastGelu (onnxruntime set): a Gelu (com.microsoft, or ONNX Gelu of opset 20) becomes com.microsoft
// FastGelu, ONNX Runtime's faster kernel. FastGelu is the tanh approximation: on a tanh Gelu it is the
// same function; on an exact (erf) Gelu it is an approximation (as experimental-experiment's rule makes
// it), off by at most
// 4.8e-4 (|gelu_erf(x) - gelu_tanh(x)| peaks at 4.73e-4 near |x| = 2.7).
// Then the Add of a bias vector before a FastGelu (this rule's or GeluOrt's) goes into its bias input: a
// linear layer's bias that BiasGelu, which wants a constant, leaves (a training export's parameter, a
// weight without its data).
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr fast_gelu_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'b'> bias;
  return rule("FastGelu")
      .priority(1)
      .cases(match(either(op<"Gelu", "com.microsoft">(x), op<"Gelu">(x)))
                 .when(is_activation_float(x))
                 .to(op<"FastGelu", "com.microsoft">(x)),
             match(op<"FastGelu", "com.microsoft">(commutative(Add(x, bias))))
                 .when(is_activation_float(x) && absent_or_vector_over_last_axis(bias, x))
                 .to(op<"FastGelu", "com.microsoft">(x, bias)));
}

}  // namespace xexp::patterns
