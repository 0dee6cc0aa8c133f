#pragma once
// GemmTranspose: Gemm(X, W) with a constant W and transB=0 becomes Gemm(X, Transpose(W), transB=1), the
// layout runtimes prefer for weights (torch's Linear stores W that way). The Transpose of a constant is
// folded by the optimizer's constant-folding hook.
#include <vector>

#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr gemm_transpose_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Const<'w'> w;
  Opt<'c'> c;
  Float<'A'> alpha;
  Float<'b'> beta;
  return rule("GemmTranspose")
      .priority(1)
      .match(
          Gemm(a, w, c, attr<"transA"> = 0, attr<"transB"> = 0, attr<"alpha"> = alpha, attr<"beta"> = beta))
      .when(rank(w) == 2)
      .to(Gemm(a, Transpose(w, attr<"perm"> = std::vector<int64_t>{1, 0}), c, attr<"transB"> = 1,
               attr<"alpha"> = alpha, attr<"beta"> = beta));
}

}  // namespace xexp::patterns
