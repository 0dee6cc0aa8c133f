#pragma once
// CastCast: Cast(Cast(x, to=m), to=t) is one Cast when the middle type loses nothing (m == t, or m is x's
// own type), or nothing at all when t is x's type and the round trip through m is exact (a float type
// through float or double).
#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr cast_cast_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Int<'m'> mid;
  Int<'t'> to;
  return rule("CastCast")
      .match(Cast(Cast(x, attr<"to"> = mid), attr<"to"> = to))
      .when(mid == to || dtype(x) == mid || (dtype(x) == to && exact_round_trip(dtype(x), mid)))
      .to(choose(dtype(x) == to, x, Cast(x, attr<"to"> = to)));
}

}  // namespace xexp::patterns
