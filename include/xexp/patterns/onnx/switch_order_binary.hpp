#pragma once
// SwitchOrderBinary: (a op b) op c, op Add or Mul, computes a full-size intermediate when a is large and
// b, c small (a bias then a scale constant, a mask then a second mask): a op (b op c) computes the small
// one instead. Reassociated when the new inner result has fewer elements (static shapes), which also
// makes each rewrite shrink it, so that rewrites stop. Floating point sums round differently by ulps.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr switch_order_binary_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Var<'c'> c;
  // b op c, known, has fewer elements than a op b.
  auto inner = keep<"inner_size">(broadcast_size(b, c));
  auto smaller_pair_first = inner >= 0 && inner < broadcast_size(a, b);
  return rule("SwitchOrderBinary")
      .priority(1)
      .cases(
          match(commutative(Add(commutative(Add(a, b)), c))).when(smaller_pair_first).to(Add(a, Add(b, c))),
          match(commutative(Mul(commutative(Mul(a, b)), c))).when(smaller_pair_first).to(Mul(a, Mul(b, c))));
}

}  // namespace xexp::patterns
