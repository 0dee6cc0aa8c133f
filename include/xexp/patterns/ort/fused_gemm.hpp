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
  // replace_with: the fused node keeps the Gemm's attributes as written and adds the activation's.
  return rule("FusedGemm")
      .priority(3)
      .match(act)
      .when(is_float32(a) && is_fusable_activation(act, std::string("FusedGemm")))
      .to(replace_with(
          "fused_gemm",
          [](rewrite::Rewriter& r, const ValueView& f, const ValueView& g) { return fuse_activation(r, f, g, "FusedGemm"); },
          act, gemm));
}

}  // namespace xexp::patterns
