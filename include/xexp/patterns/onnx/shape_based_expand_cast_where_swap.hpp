#pragma once
// ShapeBasedExpandCastWhereSwap: Where(Cast(E), E, c) with E = Expand(X, s), a mask made of a tensor
// and the tensor itself, is Expand(Where(Cast(X), X, c), s): element-wise ops and Expand commute,
// broadcasting being associative, so the Where runs on the broadcast of X and c only. Worth it when
// that broadcast is smaller than the output (as ShapeBasedExpandSwap). E feeds only the Cast and the
// Where, on either branch.
#include "xexp/patterns/onnx/shape_based_expand_swap.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr shape_based_expand_cast_where_swap_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'s'> s;
  Var<'c'> c;
  Int<'t'> to;
  auto expand = named<'e'>(Expand(x, s));
  auto mask = Cast(expand, attr<"to"> = to);
  auto then_x = named<'w'>(Where(mask, expand, c));
  auto else_x = named<'w'>(Where(mask, c, expand));
  auto x_mask = Cast(x, attr<"to"> = to);
  return rule("ShapeBasedExpandCastWhereSwap")
      .priority(1)
      .cases(match(then_x).when(broadcast_is_smaller(x, c, then_x)).to(Expand(Where(x_mask, x, c), s)),
             match(else_x).when(broadcast_is_smaller(x, c, else_x)).to(Expand(Where(x_mask, c, x), s)));
}

}  // namespace xexp::patterns
