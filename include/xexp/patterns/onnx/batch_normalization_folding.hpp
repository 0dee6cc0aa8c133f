#pragma once
// Folding an inference BatchNormalization into the constants of the linear op before it, shared by
// ConvBatchNormalization, GemmBatchNormalization and MatMulBatchNormalization: when the statistics fold
// (inference mode, one value per output channel or column, of the weights' float type), the weights
// scaled by f = scale / sqrt(var + epsilon) per output channel, and the bias (B - mean) * f + bias.
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns::normalization {

// ---- Conv: per output channel (W's first axis) -------------------------------------------------------
// BatchNormalization's factor per channel: scale / sqrt(var + epsilon).
inline Tensor batch_norm_factor(const Tensor& scale, const Tensor& var, float epsilon) {
  const Tensor eps = eval::filled(var.type(), {}, epsilon);
  return compute("Div", {scale, compute("Sqrt", {compute("Add", {var, eps})})});
}
// Inference mode (training_mode absent or 0), per-channel statistics of the weights' float type, as many
// as W has output channels, and a bias absent or constant of that shape.
inline constexpr auto batch_norm_folds_into = rewrite::fact<"batch_norm_folds_into">(
    [](const ValueView& bn, const Tensor& w, const ValueView& b, const Tensor& scale, const Tensor& bias,
       const Tensor& mean, const Tensor& var) {
      if (const ir::Attribute* t = rewrite::node_of(bn).attribute(Symbol("training_mode")); t && t->i != 0)
        return false;
      if (!is_normalization_type(w.type()) || w.dims().size() < 2) return false;
      const std::vector<int64_t> channels{w.dims()[0]};
      for (const Tensor* t : {&scale, &bias, &mean, &var})
        if (t->type() != w.type() || t->dims() != channels) return false;
      if (b.id == ir::kNone) return true;
      const Tensor* c = b.constant();
      return c && c->type() == w.type() && c->dims() == channels;
    });
// W * f, f reshaped to (channels, 1, ..., 1).
inline constexpr auto batch_norm_weight = rewrite::fact<"batch_norm_weight">(
    [](const Tensor& w, const Tensor& scale, const Tensor& var, float epsilon) {
      std::vector<int64_t> dims(w.dims().size(), 1);
      dims[0] = -1;
      return compute("Mul",
                     {w, compute("Reshape", {batch_norm_factor(scale, var, epsilon), int64_tensor(dims)})});
    });
// (B - mean) * f + bias, B being 0 when the Conv has no bias.
inline constexpr auto batch_norm_bias = rewrite::fact<"batch_norm_bias">([](const ValueView& b,
                                                                            const Tensor& scale,
                                                                            const Tensor& bias,
                                                                            const Tensor& mean,
                                                                            const Tensor& var,
                                                                            float epsilon) {
  const Tensor centered = b.id == ir::kNone ? compute("Neg", {mean}) : compute("Sub", {*b.constant(), mean});
  return compute("Add", {compute("Mul", {centered, batch_norm_factor(scale, var, epsilon)}), bias});
});

// ---- Gemm: per output column of B ------------------------------------------------------------------
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
      return ct && ct->type() == b.type() &&
             (ct->size() == 1 || ct->dims() == columns || ct->dims() == std::vector<int64_t>{1, columns[0]});
    });
// B scaled per output column.
inline constexpr auto batch_norm_gemm_weight = rewrite::fact<"batch_norm_gemm_weight">(
    [](const Tensor& b, int64_t trans_b, const Tensor& scale, const Tensor& var, float epsilon) {
      const std::vector<int64_t> dims = trans_b ? std::vector<int64_t>{-1, 1} : std::vector<int64_t>{1, -1};
      return compute("Mul",
                     {b, compute("Reshape", {batch_norm_factor(scale, var, epsilon), int64_tensor(dims)})});
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

// ---- MatMul: a Gemm with B untransposed and no C -----------------------------------------------------
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

}  // namespace xexp::patterns::normalization
