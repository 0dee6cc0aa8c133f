#pragma once
// UnsqueezeOrSqueezeReshape: a Reshape to a constant shape after a Squeeze or an Unsqueeze does not need
// it. Not when the shape holds a 0: it copies a dimension of the (un)squeezed tensor, which moved.
#include <algorithm>

#include "xexp/patterns/constant_facts.hpp"
#include "xexp/patterns/variadic_node.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr unsqueeze_or_squeeze_reshape_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Const<'s'> shape;
  // variadic: one of two ops, with or without the axes input.
  auto squeeze = variadic<'q', "Squeeze|Unsqueeze">(x);
  auto no_zero = [](const Tensor& t) {
    const std::vector<int64_t> dims = eval::as_int64s(t);
    return std::find(dims.begin(), dims.end(), 0) == dims.end();
  };
  return rule("UnsqueezeOrSqueezeReshape")
      .match(Reshape(squeeze, shape))
      .when(call("no_zero", no_zero, shape))
      .to(Reshape(x, shape));
}

}  // namespace xexp::patterns
