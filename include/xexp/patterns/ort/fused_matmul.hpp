#pragma once
// FusedMatMul (onnxruntime set): com.microsoft FusedMatMul computes alpha * op(A) @ op(B), op swapping
// the last two axes when transA/transB is set. A Transpose of the last two axes feeding a MatMul goes
// into transA or transB (not for two 2-D inputs: TransposeMatMul makes a Gemm of those), and a scalar
// Mul or Div after a FusedMatMul goes into alpha. The Transpose may have other consumers: a weight
// every layer shares is transposed once, and each layer's MatMul takes it into transB; the Transpose
// goes with its last consumer.
#include <vector>

#include "xexp/patterns/analysis/fused_matmul.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr fused_matmul_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Ints<'p'> perm;
  Const<'s'> s;
  auto fused = named<'f'>(FusedMatMul(a, b));
  auto ranks = rank(a) >= 2 && rank(b) >= 2 && (rank(a) > 2 || rank(b) > 2);
  auto scalar_of_its_type = is_scalar(s) && dtype(s) == dtype(fused);
  // rebuild: every attribute of the matched FusedMatMul is kept (transBatch* included), alpha changes.
  return rule("FusedMatMul")
      .priority(2)
      .cases(match(MatMul(shared(Transpose(a, attr<"perm"> = perm)), b))
                 .when(ranks && swaps_last_two(perm))
                 .to(FusedMatMul(a, b, attr<"alpha"> = 1.0f, attr<"transA"> = 1, attr<"transB"> = 0)),
             match(MatMul(a, shared(Transpose(b, attr<"perm"> = perm))))
                 .when(ranks && swaps_last_two(perm))
                 .to(FusedMatMul(a, b, attr<"alpha"> = 1.0f, attr<"transA"> = 0, attr<"transB"> = 1)),
             match(commutative(Mul(fused, s)))
                 .when(scalar_of_its_type)
                 .to(rebuild(fused, attr<"alpha"> = analysis::alpha_times(fused, s))),
             match(Div(fused, s))
                 .when(scalar_of_its_type && nowhere_zero(s))
                 .to(rebuild(fused, attr<"alpha"> = analysis::alpha_divided_by(fused, s))));
}

}  // namespace xexp::patterns
