#pragma once
// SwapUnary: an element-wise op after a Transpose or Reshape runs first, on the untransformed input, so
// that the layout ops meet each other (TransposeTranspose, ReshapeReshape). The op is unary, or Add, Sub,
// Mul, Div with a second input of shape () or (1,). Only ops that compute each element alone qualify
// (kElementwiseUnary): Softmax, LogSoftmax, CumSum and PRelu read an axis or broadcast a tensor that the
// layout change moves. Both ranks must be > 0: a binary op with a (1,) operand moved past a Reshape to
// rank 0 would change the output shape.
#include "xexp/patterns/op_families.hpp"
#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr swap_unary_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  auto layout = named<'t'>(op<"Transpose|Reshape">(x, etc));
  auto unary = named<'u'>(op<kElementwiseUnary | kBinaryArithmetic>(layout, etc));
  return rule("SwapUnary")
      .match(unary)
      .when(rank(x) > 0 && rank(layout) > 0 && extra_inputs_are_scalars(unary))
      .to(rebuild(layout, input<0> = rebuild(unary, input<0> = x)));
}

}  // namespace xexp::patterns
