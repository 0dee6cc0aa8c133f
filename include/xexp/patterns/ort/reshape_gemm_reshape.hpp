#pragma once
// ReshapeGemmReshape (onnxruntime set): Reshape(Gemm(Reshape(A, [-1, k]), B), S) where S gives back A's
// leading axes is com.microsoft FusedMatMul(A, B) alone (alpha and transB kept): a Linear layer applied
// to a 3-D or 4-D tensor as exporters flatten it. Three nodes become one.
#include "xexp/patterns/ort/reshape_gemm.hpp"

namespace xexp::patterns {

namespace detail {
// `out` (the last Reshape's result, shape known) has a's leading axes and the product's last axis.
inline constexpr auto restores_leading_axes =
    rewrite::fact<"restores_leading_axes">([](const ValueView& out, const ValueView& a, const ValueView& gemm) {
      if (!out.shape() || !a.shape() || !gemm.shape() || out.shape()->size() != a.shape()->size()) return false;
      const std::size_t r = a.shape()->size();
      for (std::size_t k = 0; k + 1 < r; ++k)
        if (!(rewrite::facts::KnownDim{(*out.shape())[k]} == rewrite::facts::KnownDim{(*a.shape())[k]})) return false;
      return rewrite::facts::KnownDim{out.shape()->back()} == rewrite::facts::KnownDim{gemm.shape()->back()};
    });
}  // namespace detail

inline rewrite::RulePtr reshape_gemm_reshape_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Const<'s'> shape;
  Var<'S'> back;
  Int<'t'> trans_b;
  Float<'l'> alpha;
  auto gemm = named<'g'>(
      Gemm(Reshape(a, shape), b, attr<"transA"> = 0, attr<"transB"> = trans_b, attr<"alpha"> = alpha));
  auto out = named<'o'>(Reshape(gemm, back));
  return rule("ReshapeGemmReshape")
      .priority(3)
      .match(out)
      .when(dtype(a) == ElemType::Float && detail::flattens_leading_axes(a, shape) &&
            detail::restores_leading_axes(out, a, gemm))
      .to(FusedMatMul(a, b, attr<"alpha"> = alpha, attr<"transA"> = 0, attr<"transB"> = trans_b));
}

}  // namespace xexp::patterns
