#pragma once
// GeluErf (onnxruntime set): the exact Gelu as exporters decompose it,
//   0.5 * x * (1 + Erf(x / sqrt(2)))
// with the 0.5 applied last (torch) or first, becomes com.microsoft Gelu(x) (valid at any opset; the
// default set's Gelu makes ONNX's Gelu of it from opset 20).
#include "xexp/patterns/onnx/gelu.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr gelu_erf_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'s'> sqrt2;
  Var<'o'> one;
  Var<'h'> half;
  return rule("GeluErf")
      .match(detail::erf_gelu(x, sqrt2, one, half))
      .when(detail::erf_gelu_constants(sqrt2, one, half) && is_activation_float(x))
      .to(op<"Gelu", "com.microsoft">(x));
}

}  // namespace xexp::patterns
