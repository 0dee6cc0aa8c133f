#pragma once
// Identity: operations that return their input unchanged: x + 0, x - 0, x * 1, x / 1, x ^ 1 (the constant of
// any shape that broadcasting against x leaves x's: ALBERT's additive attention mask, made of a mask of
// ones, is a (batch, 1, 1, total) tensor of -0), and a Transpose whose permutation is the identity.
// Training graphs write x ^ 1: the gradient of RMSNorm's Pow(x, 2) is 2 * Pow(x, 1).
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr identity_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Const<'c'> c;
  Ints<'p'> perm;
  auto is_zero = is_neutral(x, c, 0.0);
  auto is_one = is_neutral(x, c, 1.0);
  return rule("Identity")
      .cases(match(commutative(Add(x, c))).when(is_zero).to(x), match(Sub(x, c)).when(is_zero).to(x),
             match(commutative(Mul(x, c))).when(is_one).to(x), match(Div(x, c)).when(is_one).to(x),
             match(Pow(x, c)).when(is_one).to(x),
             match(Transpose(x, attr<"perm"> = perm)).when(is_identity_perm(perm)).to(x));
}

}  // namespace xexp::patterns
