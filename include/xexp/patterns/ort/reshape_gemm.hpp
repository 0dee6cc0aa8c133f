#pragma once
// ReshapeGemm (onnxruntime set): Gemm(Reshape(A, [-1, k]), B) flattens A's leading axes to multiply by
// a matrix; com.microsoft FusedMatMul multiplies A itself (batched over the leading axes, alpha and
// transB kept), and one Reshape to [-1, n] gives the Gemm's 2-D result. As many nodes; the Reshape is
// now after the product, where ReshapeGemmReshape and ReshapeReshape can remove it.
#include <cstdint>
#include <optional>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace matmul {
// The Reshape's constant shape flattens every axis of `a` but the last: [-1, k], or [N, k] with N the
// product of a's leading axes, k a's last axis (static), and a of rank 3 or more.
inline constexpr auto flattens_leading_axes =
    rewrite::fact<"flattens_leading_axes">([](const ValueView& a, const Tensor& shape) {
      const std::optional<std::vector<int64_t>> s = int_values(shape);
      if (!s || s->size() != 2 || !a.shape() || a.shape()->size() < 3) return false;
      const Dim last = a.shape()->back();
      if (!last.is_static() || (*s)[1] != last.value()) return false;
      if ((*s)[0] == -1) return true;
      int64_t leading = 1;
      for (std::size_t k = 0; k + 1 < a.shape()->size(); ++k) {
        if (!(*a.shape())[k].is_static()) return false;
        leading *= (*a.shape())[k].value();
      }
      return (*s)[0] == leading;
    });
// n, the Gemm's output columns: B's dim 1, or 0 when transB is set; nullopt when not static.
inline std::optional<int64_t> gemm_columns(const ValueView& b, int64_t trans_b) {
  if (!b.shape() || b.shape()->size() != 2) return std::nullopt;
  const Dim d = (*b.shape())[trans_b ? 0 : 1];
  return d.is_static() ? std::optional<int64_t>(d.value()) : std::nullopt;
}
inline constexpr auto has_static_columns = rewrite::fact<"has_static_columns">(
    [](const ValueView& b, int64_t trans_b) { return gemm_columns(b, trans_b).has_value(); });
inline constexpr auto rows_of_columns = rewrite::fact<"rows_of_columns">(
    [](const ValueView& b, int64_t trans_b) { return int64_tensor({-1, *gemm_columns(b, trans_b)}); });
}  // namespace matmul

inline rewrite::RulePtr reshape_gemm_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Const<'s'> shape;
  Int<'t'> trans_b;
  Float<'A'> alpha;
  return rule("ReshapeGemm")
      .priority(3)
      .match(Gemm(Reshape(a, shape), b, attr<"transA"> = 0, attr<"transB"> = trans_b, attr<"alpha"> = alpha))
      .when(dtype(a) == ElemType::Float && matmul::flattens_leading_axes(a, shape) &&
            matmul::has_static_columns(b, trans_b))
      .to(Reshape(FusedMatMul(a, b, attr<"alpha"> = alpha, attr<"transA"> = 0, attr<"transB"> = trans_b),
                  fold(matmul::rows_of_columns(b, trans_b))));
}

}  // namespace xexp::patterns
