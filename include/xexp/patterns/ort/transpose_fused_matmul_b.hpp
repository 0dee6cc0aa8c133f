#pragma once
// TransposeFusedMatMulB (onnxruntime set): attention computes Q @ K' with K' = Transpose(K, [0,2,3,1])
// from a (batch, sequence, heads, size) K. The same product is Transpose(K, [0,2,1,3]), the layout the
// values V also take, read by com.microsoft FusedMatMul with transB=1: as many nodes, and a Transpose
// that moves whole rows instead of single elements.
#include <vector>

#include "xexp/patterns/ort/fused_matmul.hpp"
#include "xexp/patterns/ort/fused_matmul_x2.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr transpose_fused_matmul_b_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  const std::vector<int64_t> to_heads_last{0, 2, 3, 1}, to_heads_first{0, 2, 1, 3};
  auto keys = Transpose(b, attr<"perm"> = to_heads_last);
  auto fused = named<'f'>(FusedMatMul(a, keys));
  auto types = rank(a) >= 2 && dtype(a) == ElemType::Float;
  return rule("TransposeFusedMatMulB")
      .priority(3)
      .cases(match(MatMul(a, keys))
                 .when(types)
                 .to(FusedMatMul(a, Transpose(b, attr<"perm"> = to_heads_first), attr<"alpha"> = 1.0f,
                                 attr<"transA"> = 0, attr<"transB"> = 1)),
             match(fused)
                 .when(types && flag_of(fused, "transB") == 0 && matmul::no_batch_transpose(fused))
                 .to(rebuild(fused, input<1> = Transpose(b, attr<"perm"> = to_heads_first),
                             attr<"transB"> = 1)));
}

}  // namespace xexp::patterns
