#pragma once
// CastCastBinary: Add/Sub/Mul/Div(Cast(a, to=U), Cast(b, to=U)) with a and b of the same float type T
// more precise than U is Cast(Binary(a, b), to=U): one Cast instead of two, and the op rounds once
// instead of twice (so the result may differ by one ulp of U, closer to the exact value). A T less
// precise than U (computing in float16 what the model computes in float32) and float/int mixes are
// refused.
#include "xexp/patterns/op_families.hpp"
#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr cast_cast_binary_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Int<'t'> to;
  auto binary = named<'o'>(op<kBinaryArithmetic>(Cast(a, attr<"to"> = to), Cast(b, attr<"to"> = to)));
  return rule("CastCastBinary")
      .priority(1)
      .match(binary)
      .when(dtype(a) == dtype(b) && more_precise(dtype(a), to))
      .to(Cast(rebuild(binary, a, b), attr<"to"> = to));
}

}  // namespace xexp::patterns
