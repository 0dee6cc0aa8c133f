#pragma once
// FusedGemm (onnxruntime set): an activation after a Gemm, Relu, LeakyRelu, HardSigmoid, Sigmoid or Tanh,
// becomes com.microsoft FusedGemm(A, B, C, activation=..., activation_alpha/beta=...), float only. Not
// Clip: ONNX Runtime 1.30's FusedGemm rejects it ("unknown kernel type").
#include "xexp/patterns/ort/fused_activation.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr fused_gemm_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Opt<'c'> c;
  auto gemm = named<'g'>(Gemm(a, b, c));
  auto act = named<'f'>(op<kFusedActivations>(gemm, etc));
  auto activation = keep<'A'>(activation_of(act));
  return rule("FusedGemm")
      .priority(3)
      .match(act)
      .when(is_float32(a) && is_fusable_activation(activation, std::string("FusedGemm")))
      .to(rebuild_as<"FusedGemm", "com.microsoft">(gemm, attr<"activation"> = activation_name(activation),
                                                   attr<"activation_alpha"> = activation_alpha(activation),
                                                   attr<"activation_beta"> = activation_beta(activation)));
}

}  // namespace xexp::patterns
