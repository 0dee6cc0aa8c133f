#pragma once
// ExpandSwap: an element-wise op (or Pow by a scalar) after an Expand runs first, on the smaller
// unexpanded tensor: Unary(Expand(X, s)) -> Expand(Unary(X), s). X's shape must be known, the Expand's
// output used once.
#include "xexp/patterns/onnx/swap_unary.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr expand_swap_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  auto expand = variadic<'e', "Expand">(x);
  return for_each_root(ElementwiseUnaryOps{} + OpList<"Pow">{}, rule("ExpandSwap").priority(1),
                       [&]<rewrite::FixedString Op>() {
    auto op = variadic<'u', Op>(expand);
    return match(op)
        .when(rank(x) >= 0 && call("extra_inputs_are_scalars", detail::extra_inputs_are_scalars, op))
        .to(replace_with("op_before_layout", detail::op_before_layout, op, expand));
  });
}

}  // namespace xexp::patterns
