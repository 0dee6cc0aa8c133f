#pragma once
// Gelu: a region computing the tanh Gelu, x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))), is ONNX
// Gelu(approximate="tanh"), and one computing the exact Gelu, 0.5 * x * (1 + Erf(x / sqrt(2))), is
// Gelu(approximate="none"), written out (libonnx 1.12 has no Gelu schema to read the default from, and
// BiasGelu reads the attribute); opset >= 20, however the exporter wrote them (rewrite/computes.hpp).
#include "xexp/patterns/activation_functions.hpp"
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr gelu_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  // Gelu's type constraint is the normalizations' float types.
  auto fits = opset_at_least(20) && is_normalization_float(x);
  return rule("Gelu").cases(
      match(computes(fn::gelu_tanh, x)).when(fits).to(Gelu(x, attr<"approximate"> = "tanh")),
      match(computes(fn::gelu, x)).when(fits).to(Gelu(x, attr<"approximate"> = "none")));
}

}  // namespace xexp::patterns
