#pragma once
// CastCast: Cast(Cast(x, to=m), to=t) is one Cast when the middle type loses nothing (m == t, or m is x's
// own type), or nothing at all when t is x's type and the round trip through m is exact (a float type
// through float or double).
#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

namespace detail {
inline constexpr auto exact_round_trip =
    rewrite::fact<"exact_round_trip">([](ElemType from, int64_t through) {
      const auto mid = static_cast<ElemType>(through);
      const bool small_float =
          from == ElemType::Float || from == ElemType::Float16 || from == ElemType::BFloat16;
      return small_float && (mid == ElemType::Float || mid == ElemType::Double);
    });
}  // namespace detail

inline rewrite::RulePtr cast_cast_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Int<'m'> mid;
  Int<'t'> to;
  return rule("CastCast")
      .match(Cast(Cast(x, attr<"to"> = mid), attr<"to"> = to))
      .when(mid == to || dtype(x) == mid || (dtype(x) == to && detail::exact_round_trip(dtype(x), mid)))
      .to(choose(dtype(x) == to, x, Cast(x, attr<"to"> = to)));
}

}  // namespace xexp::patterns
