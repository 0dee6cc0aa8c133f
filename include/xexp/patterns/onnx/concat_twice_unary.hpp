#pragma once
// ConcatTwiceUnary: an element-wise op (or Add/Sub/Mul/Div by a scalar) after Concat(x, x) computes the
// same half twice: U(Concat(x, x)) -> Concat(U(x), U(x)), half the work. Opset >= 18.
#include "xexp/patterns/onnx/swap_unary.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr concat_twice_unary_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Int<'a'> axis;
  auto unary = named<'u'>(op<kElementwiseUnary | kBinaryArithmetic>(Concat(x, x, attr<"axis"> = axis), etc));
  auto half = let<'h'>(rebuild(unary, input<0> = x));
  return rule("ConcatTwiceUnary")
      .priority(1)
      .match(unary)
      .when(opset_at_least(18) && extra_inputs_are_scalars(unary))
      .to(Concat(half, half, attr<"axis"> = axis));
}

}  // namespace xexp::patterns
