#pragma once
// CastCastBinary: Add/Sub/Mul/Div(Cast(a, to=U), Cast(b, to=U)) with a and b of the same float type T
// more precise than U is Cast(Binary(a, b), to=U): one Cast instead of two, and the op rounds once
// instead of twice (so the result may differ by one ulp of U, closer to the exact value). A T less
// precise than U (computing in float16 what the model computes in float32) and float/int mixes are
// refused.
#include "xexp/patterns/op_families.hpp"
#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

namespace detail {
// 3 double, 2 float, 1 float16 or bfloat16, 0 anything else.
inline int float_precision(ElemType t) {
  switch (t) {
    case ElemType::Double:
      return 3;
    case ElemType::Float:
      return 2;
    case ElemType::Float16:
    case ElemType::BFloat16:
      return 1;
    default:
      return 0;
  }
}
// T strictly more precise than U (T == U is CastPattern's job).
inline constexpr auto more_precise = rewrite::fact<"more_precise">([](ElemType t, int64_t u) {
  return float_precision(static_cast<ElemType>(u)) > 0 &&
         float_precision(t) > float_precision(static_cast<ElemType>(u));
});
}  // namespace detail

inline rewrite::RulePtr cast_cast_binary_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Int<'t'> to;
  auto binary = named<'o'>(op<kBinaryArithmetic>(Cast(a, attr<"to"> = to), Cast(b, attr<"to"> = to)));
  return rule("CastCastBinary")
      .priority(1)
      .match(binary)
      .when(dtype(a) == dtype(b) && detail::more_precise(dtype(a), to))
      .to(Cast(rebuild(binary, a, b), attr<"to"> = to));
}

}  // namespace xexp::patterns
