#pragma once
// ReshapeGemmReshape (onnxruntime set): Reshape(Gemm(Reshape(A, [-1, k]), B), S) where S gives back A's
// leading axes is com.microsoft FusedMatMul(A, B) alone (alpha and transB kept): a Linear layer applied
// to a 3-D or 4-D tensor as exporters flatten it. Three nodes become one; one Reshape stays when something
// else reads the flattened A (training graphs multiply it by the output's gradient too).
// Training graphs also sum such products before the Reshape back (a gradient reaching x through the
// q, k and v projections): ReshapeReshapeBinary made Add(Reshape(Gemm), Reshape(Gemm)) into
// Reshape(Add(Gemm, Gemm)). Then Reshape(Add(Gemm(...), Y), S) is Add(FusedMatMul(A, B), Reshape(Y, S))
// with Y of the Gemm's shape, itself a Gemm or a sum; applied again on Reshape(Y, S), the last Gemm
// goes by the first case, and the sum's Reshape with it.
#include "xexp/patterns/ort/reshape_gemm.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr reshape_gemm_reshape_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Const<'s'> shape;
  Var<'B'> back;
  Int<'t'> trans_b;
  Float<'A'> alpha;
  Var<'y'> y;
  auto gemm = named<'g'>(Gemm(shared(Reshape(a, shape)), b, attr<"transA"> = 0, attr<"transB"> = trans_b,
                              attr<"alpha"> = alpha));
  auto out = named<'o'>(Reshape(gemm, back));
  auto summed_out = named<'o'>(Reshape(commutative(Add(gemm, y)), back));
  auto product = FusedMatMul(a, b, attr<"alpha"> = alpha, attr<"transA"> = 0, attr<"transB"> = trans_b);
  auto fits = [&](auto reshaped) {
    return dtype(a) == ElemType::Float && matmul::flattens_leading_axes(a, shape) &&
           restores_leading_axes(reshaped, a, gemm);
  };
  return rule("ReshapeGemmReshape")
      .priority(3)
      .cases(match(out).when(fits(out)).to(product),
             match(summed_out)
                 .when(fits(summed_out) && same_shape(y, gemm) &&
                       (produced_by(y, "Gemm") || produced_by(y, "Add")))
                 .to(Add(product, Reshape(y, back))));
}

}  // namespace xexp::patterns
