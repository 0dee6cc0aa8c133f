#pragma once
// CastOpCast: Cast(op(Cast(X, to=T), ...), to=U) with X already of type U computes op in T only to
// round back to U: op can work in U directly, on X, with the op's other inputs cast to U (constants,
// folded). op is Add, Sub, Mul, Div, Neg, Sigmoid or Softmax. The two Casts around X go, one may come
// on the other input. T and U float types, U one ONNX Runtime's CPU kernels cover (not bfloat16).
// Computing in U rounds differently: float16 results may differ by an ulp.
#include "xexp/patterns/facts.hpp"
#include "xexp/patterns/onnx/cast_cast_binary.hpp"
#include "xexp/patterns/op_families.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr cast_op_cast_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'y'> y;
  Int<'b'> back;
  auto both = named<'o'>(op<kBinaryArithmetic>(Cast(x), Cast(y)));
  auto left = named<'o'>(op<kBinaryArithmetic>(Cast(x), y));
  auto right = named<'o'>(op<kBinaryArithmetic>(y, Cast(x)));
  auto unary = named<'o'>(op<"Neg|Sigmoid|Softmax">(Cast(x)));
  auto y_in_u = Cast(y, attr<"to"> = back);
  // x of the float type U (`back`) the result is cast to, computed in another float type by `computed`.
  auto round_trip = [&](const auto& computed) {
    return dtype(x) == back && is_cpu_float(x) && is_float(computed) && dtype(computed) != dtype(x);
  };
  return rule("CastOpCast")
      .priority(1)
      .cases(match(Cast(both, attr<"to"> = back))
                 .when(round_trip(both) && dtype(y) == back)
                 .to(rebuild(both, x, y)),
             match(Cast(left, attr<"to"> = back)).when(round_trip(left)).to(rebuild(left, x, y_in_u)),
             match(Cast(right, attr<"to"> = back)).when(round_trip(right)).to(rebuild(right, y_in_u, x)),
             match(Cast(unary, attr<"to"> = back)).when(round_trip(unary)).to(rebuild(unary, x)));
}

}  // namespace xexp::patterns
