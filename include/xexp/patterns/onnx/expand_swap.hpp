#pragma once
// ExpandSwap: an element-wise op (or Pow by a scalar) after an Expand runs first, on the smaller
// unexpanded tensor: Unary(Expand(X, s)) -> Expand(Unary(X), s). X's shape must be known, the Expand's
// output used once.
#include "xexp/patterns/onnx/swap_unary.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr expand_swap_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  auto expand = named<'e'>(Expand(x, etc));
  auto unary = named<'u'>(op<kElementwiseUnary | rewrite::FixedString("Pow")>(expand, etc));
  return rule("ExpandSwap")
      .priority(1)
      .match(unary)
      .when(rank(x) >= 0 && extra_inputs_are_scalars(unary))
      .to(rebuild(expand, input<0> = rebuild(unary, input<0> = x)));
}

}  // namespace xexp::patterns
