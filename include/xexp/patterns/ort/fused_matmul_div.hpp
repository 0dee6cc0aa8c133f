#pragma once
// FusedMatMulDiv (onnxruntime set): MatMul(a, b) scaled by a scalar, Mul(product, s) or Div(product, s)
// (attention's scores over sqrt(d) when no Transpose made the product a FusedMatMul first), is
// com.microsoft FusedMatMul(a, b, alpha = s or 1/s): one pass instead of two. FusedMatMul already takes
// the scalar after a FusedMatMul. float only: ONNX Runtime's CPU FusedMatMul has no other kernel.
// alpha multiplies the float accumulation once, as Mul does. For a Div, 1/s is rounded unless s is a
// power of two, and x * (1/s) may then differ from x / s by an ulp: ONNX Runtime's own MatMulScaleFusion
// ('extended') makes the same rewrite. Priority 3, not experimental-experiment's 2: the scores
// Div(MatMul(q, k'), s) are MultiHeadAttention's to fuse first (at 2, FusedMatMulDiv took them and
// ../shared/models' gpt_erf_L1 kept 29 nodes instead of 19).
#include "xexp/patterns/ort/fused_matmul.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr fused_matmul_div_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Const<'s'> s;
  auto product = named<'m'>(MatMul(a, b));
  auto fits = rank(a) >= 2 && rank(b) >= 2 && dtype(a) == ElemType::Float && is_scalar(s) &&
              dtype(s) == ElemType::Float;
  auto fused = [&](const auto& alpha) {
    return FusedMatMul(a, b, attr<"alpha"> = alpha, attr<"transA"> = 0, attr<"transB"> = 0);
  };
  // alpha_times and alpha_divided_by read the product's alpha: 1 on a MatMul.
  return rule("FusedMatMulDiv")
      .priority(3)
      .cases(match(commutative(Mul(product, s))).when(fits).to(fused(analysis::alpha_times(product, s))),
             match(Div(product, s))
                 .when(fits && nowhere_zero(s))
                 .to(fused(analysis::alpha_divided_by(product, s))));
}

}  // namespace xexp::patterns
