#pragma once
// MaskedFillToBool: Cast(Where(Cast(X, to=bool), a, X), to=bool) is Cast(X, to=bool) when no element of
// the constant a is zero. Where X is not zero (NaN included), the Where takes a, true once cast, as X
// is; elsewhere it takes X itself. torch writes this when it turns a 0/1 padding mask into a boolean
// one: `inverted.masked_fill(inverted.bool(), min).bool()`. The inner Cast stays and stands for the
// outer one; a must not widen X by broadcasting. When something else reads the Where, only the outer
// Cast goes.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr masked_fill_to_bool_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Const<'a'> a;
  auto mask = named<'m'>(shared(Cast(x, attr<"to"> = ElemType::Bool)));
  auto filled = named<'w'>(shared(Where(mask, a, x)));
  return rule("MaskedFillToBool")
      .priority(1)
      .match(Cast(filled, attr<"to"> = ElemType::Bool))
      .when(nowhere_zero(a) && same_shape(filled, x))
      .to(mask);
}

}  // namespace xexp::patterns
