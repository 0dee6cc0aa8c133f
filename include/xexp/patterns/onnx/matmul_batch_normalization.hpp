#pragma once
// MatMulBatchNormalization: a BatchNormalization in inference mode after MatMul(A, B), A of rank 2 and B a
// constant matrix, is a Gemm without transposition (BatchNormalization's channels, axis 1 of the [N, C]
// product, are B's columns), folded as GemmBatchNormalization folds it:
//   BN(A @ B) = Gemm(A, B * f, bias - mean * f),  f = scale / sqrt(var + eps)
// With A of another rank, axis 1 is not B's columns and nothing changes.
#include "xexp/patterns/onnx/gemm_batch_normalization.hpp"

namespace xexp::patterns {

namespace detail {
// A of rank 2, and the statistics fold into a Gemm with B untransposed and no C.
inline constexpr auto batch_norm_folds_into_matmul = rewrite::fact<"batch_norm_folds_into_matmul">(
    [](const ValueView& bn, const ValueView& a, const Tensor& b, const Tensor& scale, const Tensor& bias,
       const Tensor& mean, const Tensor& var) {
      return a.shape() && a.shape()->size() == 2 &&
             batch_norm_folds_into_gemm.f(bn, b, 0, ValueView{a.graph, ir::kNone}, scale, bias, mean, var);
    });
// bias - mean * f: ConvBatchNormalization's folded bias for a Conv without one.
inline constexpr auto batch_norm_matmul_bias = rewrite::fact<"batch_norm_matmul_bias">(
    [](const Tensor& scale, const Tensor& bias, const Tensor& mean, const Tensor& var, float epsilon) {
      return batch_norm_bias.f(ValueView{nullptr, ir::kNone}, scale, bias, mean, var, epsilon);
    });
}  // namespace detail

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
      .when(detail::batch_norm_folds_into_matmul(bn, a, b, scale, offset, mean, var))
      .to(Gemm(a, fold(detail::batch_norm_gemm_weight(b, 0, scale, var, epsilon)),
               fold(detail::batch_norm_matmul_bias(scale, offset, mean, var, epsilon))));
}

}  // namespace xexp::patterns
