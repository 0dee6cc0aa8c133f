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
  Opt<'c'> c;
  Int<'s'> trans_a;
  Int<'t'> trans_b;
  Float<'l'> alpha;
  Float<'e'> beta;
  const std::vector<int64_t> swap{1, 0};
  auto flip = [](int64_t t) { return 1 - t; };
  auto both_2d = rank(a) == 2 && rank(b) == 2;
  return rule("TransposeMatMul")
      .priority(1)
      .cases(match(MatMul(Transpose(a, attr<"perm"> = swap), b))
                 .when(both_2d)
                 .to(Gemm(a, b, attr<"transA"> = 1)),
             match(MatMul(a, Transpose(b, attr<"perm"> = swap)))
                 .when(both_2d)
                 .to(Gemm(a, b, attr<"transB"> = 1)),
             match(Gemm(Transpose(a, attr<"perm"> = swap), b, c, attr<"transA"> = trans_a,
                        attr<"transB"> = trans_b, attr<"alpha"> = alpha, attr<"beta"> = beta))
                 .when(both_2d && !is_constant(a))
                 .to(Gemm(a, b, c, attr<"transA"> = call("flip", flip, trans_a), attr<"transB"> = trans_b,
                          attr<"alpha"> = alpha, attr<"beta"> = beta)),
             match(Gemm(a, Transpose(b, attr<"perm"> = swap), c, attr<"transA"> = trans_a,
                        attr<"transB"> = trans_b, attr<"alpha"> = alpha, attr<"beta"> = beta))
                 .when(both_2d && !is_constant(b))
                 .to(Gemm(a, b, c, attr<"transA"> = trans_a, attr<"transB"> = call("flip", flip, trans_b),
                          attr<"alpha"> = alpha, attr<"beta"> = beta)));
}

}  // namespace xexp::patterns
