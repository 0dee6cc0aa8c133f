#pragma once
// FastGelu (onnxruntime set): ONNX's tanh Gelu (Gelu(approximate="tanh"), opset 20) becomes com.microsoft
// FastGelu, ONNX Runtime's faster kernel of the same formula; then the Add of a bias vector before a
// FastGelu (this rule's or GeluOrt's) goes into its bias input: a linear layer's bias that BiasGelu,
// which wants a constant, leaves (a training export's parameter, a weight without its data).
// An exact (erf) Gelu is not FastGelu's function: turning it into one is FastGeluApprox, in the opt-in
// onnxruntime_approx set.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr fast_gelu_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'b'> bias;
  return rule("FastGelu")
      .priority(1)
      .cases(match(Gelu(x, attr<"approximate"> = "tanh"))
                 .when(is_activation_float(x))
                 .to(op<"FastGelu", "com.microsoft">(x)),
             match(op<"FastGelu", "com.microsoft">(commutative(Add(x, bias))))
                 .when(is_activation_float(x) && absent_or_vector_over_last_axis(bias, x))
                 .to(op<"FastGelu", "com.microsoft">(x, bias)));
}

// FastGeluApprox (onnxruntime_approx set, which the user names): an exact (erf) Gelu, com.microsoft's
// or ONNX's (a tanh one too, which FastGelu already takes), becomes com.microsoft FastGelu, the tanh approximation, as experimental-experiment's
// FastGeluPattern does. Off by up to 4.8e-4 (|gelu_erf(x) - gelu_tanh(x)| peaks at 4.73e-4 near |x| = 2.7):
// faster, and a different function.
inline rewrite::RulePtr fast_gelu_approx_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  return rule("FastGeluApprox")
      .priority(1)
      .match(either(op<"Gelu", "com.microsoft">(x), Gelu(x)))
      .when(is_activation_float(x))
      .to(op<"FastGelu", "com.microsoft">(x));
}

}  // namespace xexp::patterns
