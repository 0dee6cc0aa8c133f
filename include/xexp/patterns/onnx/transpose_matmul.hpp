#pragma once
// TransposeMatMul: a 2-D Transpose feeding MatMul or Gemm becomes Gemm's transA/transB. A transposed
// constant is left to Gemm (GemmTranspose puts it there on purpose; constant folding removes it).
#include <vector>

#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr transpose_matmul_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Int<'s'> trans_a;
  Int<'t'> trans_b;
  const std::vector<int64_t> swap{1, 0};
  auto both_2d = rank(a) == 2 && rank(b) == 2;
  auto gemm_a = named<'g'>(Gemm(Transpose(a, attr<"perm"> = swap), b, etc, attr<"transA"> = trans_a));
  auto gemm_b = named<'g'>(Gemm(a, Transpose(b, attr<"perm"> = swap), etc, attr<"transB"> = trans_b));
  return rule("TransposeMatMul")
      .priority(1)
      .cases(match(MatMul(Transpose(a, attr<"perm"> = swap), b))
                 .when(both_2d)
                 .to(Gemm(a, b, attr<"transA"> = 1)),
             match(MatMul(a, Transpose(b, attr<"perm"> = swap)))
                 .when(both_2d)
                 .to(Gemm(a, b, attr<"transB"> = 1)),
             match(gemm_a)
                 .when(both_2d && !is_constant(a))
                 .to(rebuild(gemm_a, input<0> = a, attr<"transA"> = 1 - trans_a)),
             match(gemm_b)
                 .when(both_2d && !is_constant(b))
                 .to(rebuild(gemm_b, input<1> = b, attr<"transB"> = 1 - trans_b)));
}

}  // namespace xexp::patterns
