#pragma once
// ReshapeGemmReshape (onnxruntime set): Reshape(Gemm(Reshape(A, [-1, k]), B), S) where S gives back A's
// leading axes is com.microsoft FusedMatMul(A, B) alone (alpha and transB kept): a Linear layer applied
// to a 3-D or 4-D tensor as exporters flatten it. Three nodes become one; one Reshape stays when something
// else reads the flattened A (training graphs multiply it by the output's gradient too).
#include "xexp/patterns/ort/reshape_gemm.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr reshape_gemm_reshape_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Const<'s'> shape;
  Var<'S'> back;
  Int<'t'> trans_b;
  Float<'l'> alpha;
  auto gemm = named<'g'>(Gemm(shared(Reshape(a, shape)), b, attr<"transA"> = 0, attr<"transB"> = trans_b,
                              attr<"alpha"> = alpha));
  auto out = named<'o'>(Reshape(gemm, back));
  return rule("ReshapeGemmReshape")
      .priority(3)
      .match(out)
      .when(dtype(a) == ElemType::Float && detail::flattens_leading_axes(a, shape) &&
            restores_leading_axes(out, a, gemm))
      .to(FusedMatMul(a, b, attr<"alpha"> = alpha, attr<"transA"> = 0, attr<"transB"> = trans_b));
}

}  // namespace xexp::patterns
