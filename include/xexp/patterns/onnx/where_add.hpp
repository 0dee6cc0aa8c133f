#pragma once
// WhereAdd: x + Where(mask, 0, ±inf) (an additive attention mask) is Where(mask, x, ±inf). Both constants
// are scalars of the same shape, so the output shape does not change. An x of -inf or NaN where the mask
// is false gives ±inf instead of NaN.
#include <cmath>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr where_add_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'m'> mask;
  Const<'z'> zero;
  Const<'i'> inf;
  return rule("WhereAdd")
      .priority(1)
      .match(commutative(Add(x, Where(mask, zero, inf))))
      .when(is_scalar(zero) && is_scalar(inf) && rank(zero) == rank(inf) && all_zero(zero) &&
            is_infinite(inf))
      .to(Where(mask, x, inf));
}

}  // namespace xexp::patterns
