#pragma once
// CastCast: Cast(Cast(x, t2), t3) is one Cast to t3 when the first one loses nothing the second would
// keep: t2 == t3, or x already has type t2. When x has type t3 and the middle type holds it exactly
// (f32/f16/bf16 through float or double), both go.
#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

namespace detail {
inline bool exact_round_trip(ElemType from, int64_t through) {
  const auto mid = static_cast<ElemType>(through);
  const bool small_float = from == ElemType::Float || from == ElemType::Float16 || from == ElemType::BFloat16;
  return small_float && (mid == ElemType::Float || mid == ElemType::Double);
}
}  // namespace detail

inline rewrite::RulePtr cast_cast_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Int<'m'> mid;
  Int<'t'> to;
  return rule("CastCast")
      .match(Cast(Cast(x, attr<"to"> = mid), attr<"to"> = to))
      .when(mid == to || dtype(x) == mid ||
            (dtype(x) == to && call("exact_round_trip", detail::exact_round_trip, dtype(x), mid)))
      .to(choose(dtype(x) == to, x, Cast(x, attr<"to"> = to)));
}

}  // namespace xexp::patterns
