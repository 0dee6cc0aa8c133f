#pragma once
// ShapeBasedExpandSwap: Binary(Expand(X, s), Y) is Expand(Binary(X, Y), s) (broadcasting is
// associative, and an Expand only fills dimensions of size 1, so X and Y broadcast together). Worth it
// when X and Y broadcast to less than the output, the op then runs on fewer elements; when they give
// the whole output, (ShapeBased)ExpandBroadcast drops the Expand instead. Shapes of X and Y known; the
// Expand feeds either side and is used once.
#include "xexp/patterns/onnx/expand_broadcast.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr shape_based_expand_swap_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'y'> y;
  Var<'s'> s;
  auto left = named<'o'>(op<kBroadcastBinary>(Expand(x, s), y));
  auto right = named<'o'>(op<kBroadcastBinary>(y, Expand(x, s)));
  return rule("ShapeBasedExpandSwap")
      .priority(1)
      .cases(match(left).when(broadcast_is_smaller(x, y, left)).to(Expand(rebuild(left, x, y), s)),
             match(right).when(broadcast_is_smaller(x, y, right)).to(Expand(rebuild(right, y, x), s)));
}

}  // namespace xexp::patterns
