#pragma once
// FusedMatMulTranspose (onnxruntime set): Transpose(A @ B) swapping the last two axes is B' @ A', which
// com.microsoft FusedMatMul computes from A and B with its transA/transB flags: the Transpose goes. A
// FusedMatMul already transposing an input flips that flag (op(A)' is A when transA is set). A Reshape
// between them that only regroups the batch axes moves below the product, its last two entries swapped
// (backward graphs write bmm, view, transpose).
#include <cstdint>

#include "xexp/patterns/onnx/transpose_reshape_matmul.hpp"
#include "xexp/patterns/ort/fused_matmul.hpp"
#include "xexp/patterns/ort/fused_matmul_x2.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr fused_matmul_transpose_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Ints<'p'> perm;
  Const<'s'> shape;
  auto product = named<'m'>(MatMul(a, b));
  auto fused = named<'f'>(FusedMatMul(a, b));
  auto ranks = rank(a) >= 2 && rank(b) >= 2 && dtype(a) == ElemType::Float;
  auto swapped_product = FusedMatMul(b, a, attr<"alpha"> = 1.0f, attr<"transA"> = 1, attr<"transB"> = 1);
  auto swapped_fused = rebuild(fused, b, a, attr<"transA"> = 1 - flag_of(fused, "transB"),
                               attr<"transB"> = 1 - flag_of(fused, "transA"));
  auto regrouped = [&](auto p) { return Reshape(p, shape, attr<"allowzero"> = 0); };
  auto swapped_shape = fold(last_two_swapped(shape));
  auto product_fits = ranks && swaps_last_two(perm);
  auto fused_fits = product_fits && matmul::no_batch_transpose(fused);
  return rule("FusedMatMulTranspose")
      .priority(3)
      .cases(match(Transpose(product, attr<"perm"> = perm)).when(product_fits).to(swapped_product),
             match(Transpose(fused, attr<"perm"> = perm)).when(fused_fits).to(swapped_fused),
             match(Transpose(regrouped(product), attr<"perm"> = perm))
                 .when(product_fits && keeps_last_two_axes(product, shape))
                 .to(Reshape(swapped_product, swapped_shape)),
             match(Transpose(regrouped(fused), attr<"perm"> = perm))
                 .when(fused_fits && keeps_last_two_axes(fused, shape))
                 .to(Reshape(swapped_fused, swapped_shape)));
}

}  // namespace xexp::patterns
