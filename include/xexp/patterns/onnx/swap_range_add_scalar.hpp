#pragma once
// SwapRangeAddScalar: Range(start, limit, delta) + p with p of shape () or (1,) is
// Range(start + p, limit + p, delta), so that a constant p folds into the bounds. Integer types only: in
// floating point, (limit + p) - (start + p) may round to another length than limit - start. A (1,) p
// is squeezed to a scalar, which Range requires.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr swap_range_add_scalar_rule() {
  using namespace rewrite::dsl;
  Var<'s'> start;
  Var<'l'> limit;
  Var<'d'> delta;
  Var<'p'> plus;
  auto scalar = let<'q'>(choose(rank(plus) == 1, Squeeze(plus, fold(int64_tensor({0}))), plus));
  return rule("SwapRangeAddScalar")
      .priority(1)
      .match(commutative(Add(Range(start, limit, delta), plus)))
      .when(is_scalar(plus) && is_integer(plus) && dtype(plus) == dtype(start))
      .to(Range(Add(start, scalar), Add(limit, scalar), delta));
}

}  // namespace xexp::patterns
