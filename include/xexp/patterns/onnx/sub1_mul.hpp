#pragma once
// Sub1Mul: (1 - x) * y is y - x * y (what the fusions of the onnxruntime set look for). The rounding
// differs by an ulp of y, not of the result: where x is close to 1, y - x * y cancels, and an element
// far smaller than y may lose most of its digits (torch's SiLU backward, y * (1 - sigmoid(y)), moved
// elements of a training graph's gradients by up to 31 % of 1 + |value|, 8e-5 of their output's RMS).
// A (1,)-shaped one must not raise the rank of a rank-0 x. Not for x = Sigmoid(...): 1 - x is then
// exact where x is close to 1 (x in [0.5, 1], Sterbenz), the case where the rewrite loses the most.
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
      .when(scalar_is(one, 1.0) && (rank(one) == 0 || rank(x) >= rank(one)) && !produced_by(x, "Sigmoid"))
      .to(Sub(y, Mul(x, y)));
}

}  // namespace xexp::patterns
