#pragma once
// MulMulMatMul: MatMul(Mul(a, c), Mul(b, d)) with scalar constants c and d is MatMul(a, b) * (c*d): one
// Mul instead of two. The product is rounded once into the constants' type, so the numbers may differ in
// the last bits.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr mul_mul_matmul_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Const<'c'> c;
  Const<'d'> d;
  return rule("MulMulMatMul")
      .priority(1)
      .match(MatMul(commutative(Mul(a, c)), commutative(Mul(b, d))))
      .when(is_scalar(c) && is_scalar(d) && dtype(c) == dtype(d))
      .to(Mul(MatMul(a, b), fold(scalar_product(c, d))));
}

}  // namespace xexp::patterns
