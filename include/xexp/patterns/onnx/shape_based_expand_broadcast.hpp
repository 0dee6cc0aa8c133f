#pragma once
// ShapeBasedExpandBroadcast: like ExpandBroadcast, with any Expand shape (computed at run time) and an
// Expand on one or both sides: Binary(Expand(X, s), Expand(Y, t)) is Binary(X, Y) when broadcasting X
// against Y already gives the output shape (known shapes, same rank, see detail::broadcasts_to).
#include "xexp/patterns/onnx/expand_broadcast.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr shape_based_expand_broadcast_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'y'> y;
  Var<'s'> s;
  Var<'t'> t;
  auto one_case = [&](auto binary) {
    return match(binary).when(detail::broadcasts_to(x, y, binary)).to(rebuild(binary, x, y));
  };
  return rule("ShapeBasedExpandBroadcast")
      .priority(1)
      .cases(one_case(named<'o'>(op<kBroadcastBinary>(Expand(x, s), Expand(y, t)))),
             one_case(named<'o'>(op<kBroadcastBinary>(Expand(x, s), y))),
             one_case(named<'o'>(op<kBroadcastBinary>(x, Expand(y, t)))));
}

}  // namespace xexp::patterns
