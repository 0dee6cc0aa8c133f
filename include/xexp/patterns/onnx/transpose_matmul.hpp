#pragma once
// TransposeMatMul: a 2-D Transpose feeding MatMul or Gemm becomes Gemm's transA/transB. A transposed
// constant is left to Gemm (GemmTranspose puts it there on purpose; constant folding removes it).
// The Transpose may feed several products (backward graphs multiply one transposed gradient by several
// activations): each becomes a Gemm, and the Transpose goes with the last. When something else reads it,
// the MatMuls stay, free for the rules that fuse more than a flag.
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr transpose_matmul_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Int<'T'> trans_a;
  Int<'t'> trans_b;
  const std::vector<int64_t> swap{1, 0};
  auto ta = named<'u'>(shared(Transpose(a, attr<"perm"> = swap)));
  auto tb = named<'u'>(shared(Transpose(b, attr<"perm"> = swap)));
  auto both_2d = rank(a) == 2 && rank(b) == 2;
  auto fits_a = both_2d && read_only_by_matmul_or_gemm(ta);
  auto fits_b = both_2d && read_only_by_matmul_or_gemm(tb);
  auto gemm_a = named<'g'>(Gemm(ta, b, etc, attr<"transA"> = trans_a));
  auto gemm_b = named<'g'>(Gemm(a, tb, etc, attr<"transB"> = trans_b));
  return rule("TransposeMatMul")
      .priority(1)
      .cases(match(MatMul(ta, b)).when(fits_a).to(Gemm(a, b, attr<"transA"> = 1)),
             match(MatMul(a, tb)).when(fits_b).to(Gemm(a, b, attr<"transB"> = 1)),
             match(gemm_a)
                 .when(fits_a && !is_constant(a))
                 .to(rebuild(gemm_a, input<0> = a, attr<"transA"> = 1 - trans_a)),
             match(gemm_b)
                 .when(fits_b && !is_constant(b))
                 .to(rebuild(gemm_b, input<1> = b, attr<"transB"> = 1 - trans_b)));
}

}  // namespace xexp::patterns
