#pragma once
// ShapeBasedMatMulToMul: MatMul(X, Y) with X (..., m, 1) and Y (..., 1, n) sums over one term: it is the
// outer product X * Y, which Mul computes by broadcasting (the leading axes broadcast as MatMul's do),
// without a matrix kernel. Both ranks 2 or more; the two size-1 axes known.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr shape_based_matmul_to_mul_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'y'> y;
  return rule("ShapeBasedMatMulToMul")
      .priority(1)
      .match(MatMul(x, y))
      .when(rank(x) >= 2 && rank(y) >= 2 && dim(x, -1) == 1 && dim(y, -2) == 1)
      .to(Mul(x, y));
}

}  // namespace xexp::patterns
