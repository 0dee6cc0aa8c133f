#pragma once
// UnsqueezeOrSqueezeReshape: a Reshape to a constant shape after a Squeeze or an Unsqueeze does not need
// it. Not when the shape holds a 0: it copies a dimension of the (un)squeezed tensor, which moved.
#include <algorithm>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace detail {
inline constexpr auto no_zero = rewrite::fact<"no_zero">([](const Tensor& t) {
  const std::vector<int64_t> dims = eval::as_int64s(t);
  return std::find(dims.begin(), dims.end(), 0) == dims.end();
});
}  // namespace detail

inline rewrite::RulePtr unsqueeze_or_squeeze_reshape_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Const<'s'> shape;
  auto squeeze = op<"Squeeze|Unsqueeze">(x, etc);  // with or without the axes input
  return rule("UnsqueezeOrSqueezeReshape")
      .match(Reshape(squeeze, shape))
      .when(detail::no_zero(shape))
      .to(Reshape(x, shape));
}

}  // namespace xexp::patterns
