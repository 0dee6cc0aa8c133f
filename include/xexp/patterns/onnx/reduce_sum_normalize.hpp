#pragma once
// ReduceSumNormalize: half-precision backward graphs (Softmax's gradient) widen X to compute
// X - ReduceSum(X) * Y in float and cast the result back to X's type: Cast(X, to=T) -> ReduceSum,
// Mul by Y, Sub from the widened X -> Cast(to=X's type). Computed in X's type instead, on X with Y cast
// down: the two Casts of X's size go, one Cast of Y comes (a constant or a smaller tensor in practice).
// X of a float type ONNX Runtime's CPU kernels cover (float16, double; not bfloat16). Computing in
// X's type rounds differently: float16 results may differ by a few ulps.
#include "xexp/patterns/facts.hpp"
#include "xexp/patterns/onnx/cast_cast_binary.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr reduce_sum_normalize_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'y'> y;
  Int<'b'> back;
  auto wide = named<'w'>(Cast(x));
  auto sum = named<'r'>(ReduceSum(wide, etc));
  return rule("ReduceSumNormalize")
      .priority(1)
      .match(Cast(Sub(wide, commutative(Mul(sum, y))), attr<"to"> = back))
      .when(dtype(x) == back && is_cpu_float(x) && more_precise(dtype(wide), dtype(x)))
      .to(Sub(x, Mul(rebuild(sum, input<0> = x), Cast(y, attr<"to"> = back))));
}

}  // namespace xexp::patterns
