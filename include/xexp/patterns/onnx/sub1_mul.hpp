#pragma once
// Sub1Mul: (1 - x) * y is y - x * y (what the fusions of the onnxruntime set look for). Rounding may
// differ in the last bits. A (1,)-shaped one must not raise the rank of a rank-0 x.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr sub1_mul_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'y'> y;
  Const<'o'> one;
  return rule("Sub1Mul")
      .priority(1)
      .match(commutative(Mul(Sub(one, x), y)))
      .when(scalar_is(one, 1.0) && (rank(one) == 0 || rank(x) >= rank(one)))
      .to(Sub(y, Mul(x, y)));
}

}  // namespace xexp::patterns
