#pragma once
// GemmBatchNormalization: a BatchNormalization in inference mode after a Gemm with a constant B (its
// channels are the Gemm's output columns) goes into B and C, as ConvBatchNormalization does for a Conv:
//   BN(alpha * A @ B + beta * C) = alpha * A @ (B * f) + (beta * C - mean) * f + bias,  f = scale / sqrt(var + eps)
// The new Gemm keeps alpha, transA and transB, and takes beta = 1 with the folded C (one value per column).
#include <vector>

#include "xexp/patterns/onnx/batch_normalization_folding.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr gemm_batch_normalization_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Const<'b'> b;
  Opt<'c'> c;
  Float<'A'> alpha;
  Float<'B'> beta;
  Int<'T'> trans_a;
  Int<'t'> trans_b;
  Const<'s'> scale;
  Const<'o'> offset;
  Const<'m'> mean;
  Const<'v'> var;
  Float<'e'> epsilon;
  auto gemm = Gemm(a, b, c, attr<"alpha"> = alpha, attr<"beta"> = beta, attr<"transA"> = trans_a,
                   attr<"transB"> = trans_b);
  auto bn = named<'N'>(BatchNormalization(gemm, scale, offset, mean, var, attr<"epsilon"> = epsilon));
  return rule("GemmBatchNormalization")
      .priority(1)
      .match(bn)
      .when(normalization::batch_norm_folds_into_gemm(bn, b, trans_b, c, scale, offset, mean, var))
      .to(Gemm(a, fold(normalization::batch_norm_gemm_weight(b, trans_b, scale, var, epsilon)),
               fold(normalization::batch_norm_gemm_bias(c, beta, scale, offset, mean, var, epsilon)),
               attr<"alpha"> = alpha, attr<"beta"> = 1.0f, attr<"transA"> = trans_a,
               attr<"transB"> = trans_b));
}

}  // namespace xexp::patterns
