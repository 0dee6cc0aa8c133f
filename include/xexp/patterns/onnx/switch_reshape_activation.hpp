#pragma once
// SwitchReshapeActivation: MatMul/Gemm -> Reshape or Transpose -> activation becomes MatMul/Gemm ->
// activation -> Reshape or Transpose, so that the activation sits next to the product (fusions such as
// FusedMatMul + activation look for that). Only activations computing each element alone: Softmax
// (its axis moves with the layout) and PRelu (its slope broadcasts against the layout) would change the
// result.
#include "xexp/patterns/onnx/swap_unary.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr switch_reshape_activation_rule() {
  using namespace rewrite::dsl;
  auto product = named<'m'>(op<"MatMul|Gemm">(etc));
  auto layout = named<'t'>(op<"Transpose|Reshape">(product, etc));
  auto activation =
      named<'u'>(op<"Gelu|Exp|Elu|Relu|Tan|Tanh|Cos|Cosh|Sin|Sinh|Erf|LeakyRelu|Selu|Softplus">(layout, etc));
  return rule("SwitchReshapeActivation")
      .priority(1)
      .match(activation)
      .to(rebuild(layout, input<0> = rebuild(activation, input<0> = product)));
}

}  // namespace xexp::patterns
