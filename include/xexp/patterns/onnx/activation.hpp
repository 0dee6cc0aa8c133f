#pragma once
// Activation: a region computing one of ONNX's activations that no other rule makes becomes that op:
// Softplus (log(1 + exp(x))), Mish (x * tanh(softplus(x)), opset >= 18), HardSigmoid
// (max(0, min(1, alpha x + beta)), e.g. Clip(x / 6 + 0.5, 0, 1)) and Elu (Where(x > 0, x, alpha *
// (exp(x) - 1))), however written (rewrite/computes.hpp). Their float types: float, double, float16.
#include "xexp/patterns/activation_functions.hpp"
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr activation_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Float<'a'> alpha;
  Float<'b'> beta;
  auto fits = is_cpu_float(x);
  return rule("Activation")
      .cases(match(computes(fn::mish, x)).when(opset_at_least(18) && fits).to(Mish(x)),
             match(computes(fn::softplus, x)).when(fits).to(Softplus(x)),
             match(computes(fn::hard_sigmoid, x, alpha, beta))
                 .when(opset_at_least(6) && fits)
                 .to(HardSigmoid(x, attr<"alpha"> = alpha, attr<"beta"> = beta)),
             match(computes(fn::elu, x, alpha))
                 .when(opset_at_least(6) && fits)
                 .to(Elu(x, attr<"alpha"> = alpha)));
}

}  // namespace xexp::patterns
