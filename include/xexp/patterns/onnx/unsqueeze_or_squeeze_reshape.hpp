#pragma once
// UnsqueezeOrSqueezeReshape: a Reshape to a constant shape after a Squeeze or an Unsqueeze does not need
// it. Not when the shape holds a 0: it copies a dimension of the (un)squeezed tensor, which moved.
#include <algorithm>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr unsqueeze_or_squeeze_reshape_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Const<'s'> shape;
  auto squeeze = op<"Squeeze|Unsqueeze">(x, etc);  // with or without the axes input
  return rule("UnsqueezeOrSqueezeReshape")
      .match(Reshape(squeeze, shape))
      .when(!contains_value(shape, 0))
      .to(Reshape(x, shape));
}

}  // namespace xexp::patterns
