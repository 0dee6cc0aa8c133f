#pragma once
// FastGelu (onnxruntime set): a Gelu (com.microsoft, or ONNX Gelu of opset 20) becomes com.microsoft
// FastGelu, ONNX Runtime's faster kernel. FastGelu is the tanh approximation: on a tanh Gelu it is the
// same function; on an exact (erf) Gelu it is an approximation, as in the original, off by at most
// 4.8e-4 (|gelu_erf(x) - gelu_tanh(x)| peaks at 4.73e-4 near |x| = 2.7).
#include "xexp/patterns/activation_constants.hpp"
#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr fast_gelu_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  auto fits = call("is_activation_float", detail::is_activation_float, dtype(x));
  auto fast = op<"FastGelu", "com.microsoft">(x);
  return rule("FastGelu").priority(1).cases(
      match(op<"Gelu", "com.microsoft">(x)).when(fits).to(fast),
      match(op<"Gelu">(x)).when(fits).to(fast));
}

}  // namespace xexp::patterns
