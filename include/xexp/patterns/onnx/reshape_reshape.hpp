#pragma once
// ReshapeReshape: Reshape(Reshape(x, s1), s2) is Reshape(x, s2) when s2 copies no dimension from the
// intermediate tensor (it holds no 0; -1 still resolves to the same size from the element count).
#include <algorithm>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace detail {
inline constexpr auto copies_no_dim = rewrite::fact<"copies_no_dim">([](const Tensor& shape) {
  auto values = int_values(shape);
  return shape.type() == ElemType::Int64 && values &&
         std::find(values->begin(), values->end(), 0) == values->end();
});
}  // namespace detail

inline rewrite::RulePtr reshape_reshape_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'f'> first_shape;
  Const<'s'> s;
  return rule("ReshapeReshape")
      .match(Reshape(Reshape(x, first_shape), s))
      .when(detail::copies_no_dim(s))
      .to(Reshape(x, s));
}

}  // namespace xexp::patterns
