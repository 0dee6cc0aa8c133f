#pragma once
// MatMulBatchNormalization: a BatchNormalization in inference mode after MatMul(A, B), A of rank 2 and B a
// constant matrix, is a Gemm without transposition (BatchNormalization's channels, axis 1 of the [N, C]
// product, are B's columns), folded as GemmBatchNormalization folds it:
//   BN(A @ B) = Gemm(A, B * f, bias - mean * f),  f = scale / sqrt(var + eps)
// With A of another rank, axis 1 is not B's columns and nothing changes.
#include "xexp/patterns/onnx/batch_normalization_folding.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr matmul_batch_normalization_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Const<'b'> b;
  Const<'s'> scale;
  Const<'o'> offset;
  Const<'m'> mean;
  Const<'v'> var;
  Float<'e'> epsilon;
  auto bn =
      named<'N'>(BatchNormalization(MatMul(a, b), scale, offset, mean, var, attr<"epsilon"> = epsilon));
  return rule("MatMulBatchNormalization")
      .priority(1)
      .match(bn)
      .when(normalization::batch_norm_folds_into_matmul(bn, a, b, scale, offset, mean, var))
      .to(Gemm(a, fold(normalization::batch_norm_gemm_weight(b, 0, scale, var, epsilon)),
               fold(normalization::batch_norm_matmul_bias(scale, offset, mean, var, epsilon))));
}

}  // namespace xexp::patterns
