#pragma once
// HardSwish: a region computing x * max(0, min(1, x / 6 + 0.5)) (x * HardSigmoid(x, 1/6, 0.5), the Clip
// form exporters write below opset 14 and keep after an upgrade, x * Clip(x + 3, 0, 6) / 6 with Clip's
// bounds as inputs or attributes, a Relu6, ...) becomes HardSwish(x), from opset 14. Before it, a region
// of more than two nodes becomes x * HardSigmoid(x, 1/6, 0.5): standard ONNX there (paddle2onnx writes
// the Clip form at opsets 9 and 11), half the nodes of the Clip form.
#include "xexp/patterns/activation_functions.hpp"
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr hard_swish_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  return rule("HardSwish")
      .priority(1)
      .cases(match(computes(fn::hard_swish, x)).when(opset_at_least(14) && is_cpu_float(x)).to(HardSwish(x)),
             match(computes(fn::hard_swish, x).at_least(3))
                 .when(opset_at_least(6) && is_cpu_float(x))
                 .to(Mul(x, HardSigmoid(x, attr<"alpha"> = 1.0f / 6.0f, attr<"beta"> = 0.5f))));
}

}  // namespace xexp::patterns
