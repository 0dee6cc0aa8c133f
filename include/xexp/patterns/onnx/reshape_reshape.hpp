#pragma once
// ReshapeReshape: Reshape(Reshape(x, s1), s2) is Reshape(x, s2) when s2 copies no dimension from the
// intermediate tensor (it holds no 0; -1 still resolves to the same size from the element count).
#include <algorithm>

#include "xexp/patterns/constant_math.hpp"
#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

namespace detail {
inline bool copies_no_dim(const Tensor& shape) {
  auto values = int64_values(shape);
  return values && std::find(values->begin(), values->end(), 0) == values->end();
}
}  // namespace detail

inline rewrite::RulePtr reshape_reshape_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'f'> first_shape;
  Const<'s'> s;
  return rule("ReshapeReshape")
      .match(Reshape(Reshape(x, first_shape), s))
      .when(call("copies_no_dim", detail::copies_no_dim, s))
      .to(Reshape(x, s));
}

}  // namespace xexp::patterns
