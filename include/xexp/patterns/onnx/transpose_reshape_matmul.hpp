#pragma once
// TransposeReshapeMatMul: MatMul(X, Reshape(Transpose(Y, last two axes swapped), S)) where S only
// regroups the leading axes is MatMul(X, Transpose(Reshape(Y, S'), last two swapped)) with S' = S with
// its last two entries swapped: as many nodes, and the Transpose now sits right on the MatMul, where
// TransposeMatMul (2-D, Gemm) or FusedMatMul (onnxruntime set) takes it into a flag. Same for the first
// input.
#include <cstdint>
#include <optional>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr transpose_reshape_matmul_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'y'> y;
  Ints<'p'> perm;
  Const<'s'> shape;
  auto transposed = named<'t'>(Transpose(y, attr<"perm"> = perm));
  auto regrouped = Reshape(transposed, shape, attr<"allowzero"> = 0);
  auto moved =
      Transpose(Reshape(y, fold(last_two_swapped(shape))), attr<"perm"> = matrix_transpose_perm(shape));
  auto condition = swaps_last_two(perm) && keeps_last_two_axes(transposed, shape);
  return rule("TransposeReshapeMatMul")
      .priority(1)
      .cases(match(MatMul(x, regrouped)).when(condition).to(MatMul(x, moved)),
             match(MatMul(regrouped, x)).when(condition).to(MatMul(moved, x)));
}

}  // namespace xexp::patterns
