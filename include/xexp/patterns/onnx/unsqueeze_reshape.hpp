#pragma once
// UnsqueezeReshape: Unsqueeze then a Reshape to a constant shape that only inserts one 1 into X's shape
// (at another place) is one Unsqueeze at that place. Shapes are compared dimension by dimension, symbols
// by name; unknown dimensions never match.
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr unsqueeze_reshape_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Const<'s'> shape;
  auto unsqueeze = Unsqueeze(x, etc);  // with or without its axes input
  auto reshape = named<'r'>(Reshape(unsqueeze, shape));
  auto axes = inserted_axis(x, reshape);
  return rule("UnsqueezeReshape")
      .match(reshape)
      .when(axes != std::vector<int64_t>{})
      .to(Unsqueeze(x, attr<"axes"> = axes));
}

}  // namespace xexp::patterns
