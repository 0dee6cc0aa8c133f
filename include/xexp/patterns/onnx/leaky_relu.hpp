#pragma once
// LeakyRelu: a region computing x for x >= 0 and alpha * x below (Where(x > 0, x, x * alpha),
// Max(x, x * alpha) for alpha < 1, ...), alpha a constant a float attribute holds (same numbers then), is
// LeakyRelu(x, alpha). Opset >= 6.
#include "xexp/patterns/activation_functions.hpp"
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr leaky_relu_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Float<'a'> alpha;
  return rule("LeakyRelu")
      .match(computes(fn::leaky_relu, x, alpha))
      .when(opset_at_least(6))
      .to(LeakyRelu(x, attr<"alpha"> = alpha));
}

}  // namespace xexp::patterns
