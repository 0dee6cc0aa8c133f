#pragma once
// SwitchReshapeActivation: MatMul/Gemm -> Reshape or Transpose -> activation becomes MatMul/Gemm ->
// activation -> Reshape or Transpose, so that the activation sits next to the product (fusions such as
// FusedMatMul + activation look for that). Only activations computing each element alone: the original
// also moved Softmax (its axis moves with the layout) and PRelu (its slope broadcasts against the
// layout), which changes the result.
#include "xexp/patterns/onnx/swap_unary.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr switch_reshape_activation_rule() {
  using namespace rewrite::dsl;
  auto product = variadic<'m', "MatMul|Gemm">();
  auto layout = variadic<'t', "Transpose|Reshape">(product);
  using Activations = OpList<"Gelu", "Exp", "Elu", "Relu", "Tan", "Tanh", "Cos", "Cosh", "Sin", "Sinh", "Erf",
                             "LeakyRelu", "Selu", "Softplus">;
  return for_each_root(Activations{}, rule("SwitchReshapeActivation").priority(1), [&]<rewrite::FixedString Op>() {
    auto activation = variadic<'u', Op>(layout);
    return match(activation).to(replace_with("op_before_layout", detail::op_before_layout, activation, layout));
  });
}

}  // namespace xexp::patterns
