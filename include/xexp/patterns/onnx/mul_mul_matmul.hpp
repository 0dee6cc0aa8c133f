#pragma once
// MulMulMatMul: MatMul(Mul(a, c), Mul(b, d)) with scalar constants c and d is MatMul(a, b) * (c*d): one
// Mul instead of two. The product is rounded once into the constants' type, so the numbers may differ in
// the last bits.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace detail {
// c * d as one scalar of c's type.
inline constexpr auto scalar_product = rewrite::fact<"scalar_product">([](const Tensor& c, const Tensor& d) {
  return eval::filled(c.type(), {}, eval::element_as_double(c, 0) * eval::element_as_double(d, 0));
});
}  // namespace detail

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
      .to(Mul(MatMul(a, b), fold(detail::scalar_product(c, d))));
}

}  // namespace xexp::patterns
