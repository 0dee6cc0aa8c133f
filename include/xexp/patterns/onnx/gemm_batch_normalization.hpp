#pragma once
// GemmBatchNormalization: a BatchNormalization in inference mode after a Gemm with a constant B (its
// channels are the Gemm's output columns) goes into B and C, as ConvBatchNormalization does for a Conv:
//   BN(alpha * A @ B + beta * C) = alpha * A @ (B * f) + (beta * C - mean) * f + bias,  f = scale / sqrt(var + eps)
// The new Gemm keeps alpha, transA and transB, and takes beta = 1 with the folded C (one value per column).
#include <vector>

#include "xexp/patterns/onnx/conv_batch_normalization.hpp"

namespace xexp::patterns {

namespace detail {
// B's output columns: its first axis when transB, else its second.
inline int64_t gemm_columns(const Tensor& b, int64_t trans_b) { return b.dims()[trans_b ? 0 : 1]; }
// Inference mode, per-column statistics of B's float type, and C absent or constant of one value or one
// per column.
inline constexpr auto batch_norm_folds_into_gemm = rewrite::fact<"batch_norm_folds_into_gemm">(
    [](const ValueView& bn, const Tensor& b, int64_t trans_b, const ValueView& c, const Tensor& scale,
       const Tensor& bias, const Tensor& mean, const Tensor& var) {
      if (const ir::Attribute* t = rewrite::node_of(bn).attribute(Symbol("training_mode")); t && t->i != 0)
        return false;
      if (!is_normalization_type(b.type()) || b.dims().size() != 2) return false;
      const std::vector<int64_t> columns{gemm_columns(b, trans_b)};
      for (const Tensor* t : {&scale, &bias, &mean, &var})
        if (t->type() != b.type() || t->dims() != columns) return false;
      if (c.id == ir::kNone) return true;
      const Tensor* ct = c.constant();
      return ct && ct->type() == b.type() && (ct->size() == 1 || ct->dims() == columns ||
                                               ct->dims() == std::vector<int64_t>{1, columns[0]});
    });
// B scaled per output column.
inline constexpr auto batch_norm_gemm_weight = rewrite::fact<"batch_norm_gemm_weight">(
    [](const Tensor& b, int64_t trans_b, const Tensor& scale, const Tensor& var, float epsilon) {
      const std::vector<int64_t> dims = trans_b ? std::vector<int64_t>{-1, 1} : std::vector<int64_t>{1, -1};
      return compute("Mul", {b, compute("Reshape", {batch_norm_factor(scale, var, epsilon), int64_tensor(dims)})});
    });
// (beta * C - mean) * f + bias, one value per column (C is 0 when absent).
inline constexpr auto batch_norm_gemm_bias = rewrite::fact<"batch_norm_gemm_bias">(
    [](const ValueView& c, float beta, const Tensor& scale, const Tensor& bias, const Tensor& mean,
       const Tensor& var, float epsilon) {
      Tensor centered = compute("Neg", {mean});
      if (c.id != ir::kNone) {
        const Tensor flat = compute("Reshape", {*c.constant(), int64_tensor({-1})});
        const Tensor scaled = compute("Mul", {flat, eval::filled(mean.type(), {}, beta)});
        centered = compute("Sub", {scaled, mean});
      }
      return compute("Add", {compute("Mul", {centered, batch_norm_factor(scale, var, epsilon)}), bias});
    });
}  // namespace detail

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
      .when(detail::batch_norm_folds_into_gemm(bn, b, trans_b, c, scale, offset, mean, var))
      .to(Gemm(a, fold(detail::batch_norm_gemm_weight(b, trans_b, scale, var, epsilon)),
               fold(detail::batch_norm_gemm_bias(c, beta, scale, offset, mean, var, epsilon)),
               attr<"alpha"> = alpha, attr<"beta"> = 1.0f, attr<"transA"> = trans_a,
               attr<"transB"> = trans_b));
}

}  // namespace xexp::patterns
