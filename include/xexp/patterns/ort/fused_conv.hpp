#pragma once
// FusedConv (onnxruntime set): an activation after a Conv, Relu, LeakyRelu, Clip (constant bounds),
// HardSigmoid, Sigmoid or Tanh, becomes com.microsoft FusedConv(x, W, B, activation=...,
// activation_params=...), float only (ONNX Runtime's CPU kernel). It runs at the last priority, once the
// BatchNormalization, bias and scale after the Conv went into its weights.
#include "xexp/patterns/ort/fused_activation.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr fused_conv_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'w'> w;
  Opt<'b'> b;
  auto conv = named<'c'>(Conv(x, w, b));
  auto act = named<'a'>(op<kFusedActivations>(conv, etc));  // Clip's optional bounds
  auto activation = keep<'A'>(activation_of(act));
  // rebuild_as: the fused node takes every attribute of the Conv, which a node pattern cannot list
  // (pads, strides, dilations and kernel_shape have no default to capture when absent).
  return rule("FusedConv")
      .priority(3)
      .match(act)
      .when(is_float32(x) && is_fusable_activation(activation, std::string("FusedConv")))
      .to(rebuild_as<"FusedConv", "com.microsoft">(
          conv, attr<"activation"> = activation_name(activation),
          attr<"activation_params"> = activation_params(activation)));
}

}  // namespace xexp::patterns
