#pragma once
// ReshapeReshapeBinary: Binary(Reshape(X, s), Reshape(Y, s)) with X and Y of the same known shape and
// the same constant s is Reshape(Binary(X, Y), s): one Reshape instead of two. Binary is Add, Sub, Mul
// or Div; both Reshapes have allowzero=0 and are used once.
#include "xexp/patterns/facts.hpp"
#include "xexp/patterns/op_families.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr reshape_reshape_binary_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'y'> y;
  Const<'s'> s;
  Const<'t'> t;
  auto binary = named<'o'>(
      op<kBinaryArithmetic>(Reshape(x, s, attr<"allowzero"> = 0), Reshape(y, t, attr<"allowzero"> = 0)));
  return rule("ReshapeReshapeBinary")
      .priority(1)
      .match(binary)
      .when(same_shape(x, y) && same_int64_values(s, t))
      .to(Reshape(rebuild(binary, x, y), s));
}

}  // namespace xexp::patterns
