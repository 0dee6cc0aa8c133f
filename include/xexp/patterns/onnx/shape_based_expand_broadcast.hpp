#pragma once
// ShapeBasedExpandBroadcast: like ExpandBroadcast, with any Expand shape (computed at run time) and an
// Expand on one or both sides: Binary(Expand(X, s), Expand(Y, t)) is Binary(X, Y) when broadcasting X
// against Y already gives the output shape (known shapes, see is_broadcast_of). The same holds
// for Where, which broadcasts its three inputs: attention masks write Where(Expand(mask), min,
// Expand(causal)), both Expanded to (batch, 1, seq, seq). One Expand goes per application.
#include "xexp/patterns/onnx/expand_broadcast.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr shape_based_expand_broadcast_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'y'> y;
  Var<'z'> z;
  Var<'s'> s;
  Var<'t'> t;
  auto one_case = [&](auto op, auto... operands) {
    return match(op).when(is_broadcast_of(op, operands...)).to(rebuild(op, operands...));
  };
  return rule("ShapeBasedExpandBroadcast")
      .priority(1)
      .cases(one_case(named<'o'>(op<kBroadcastBinary>(Expand(x, s), Expand(y, t))), x, y),
             one_case(named<'o'>(op<kBroadcastBinary>(Expand(x, s), y)), x, y),
             one_case(named<'o'>(op<kBroadcastBinary>(x, Expand(y, t))), x, y),
             one_case(named<'o'>(Where(Expand(x, s), y, z)), x, y, z),
             one_case(named<'o'>(Where(x, Expand(y, s), z)), x, y, z),
             one_case(named<'o'>(Where(x, y, Expand(z, s))), x, y, z));
}

}  // namespace xexp::patterns
