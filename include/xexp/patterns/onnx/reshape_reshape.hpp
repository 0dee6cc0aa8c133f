#pragma once
// ReshapeReshape: Reshape(Reshape(x, s1), s2) is Reshape(x, s2) when every dimension s2 copies from the
// intermediate tensor (a 0 at position i) is x's dimension i as well (same size or same symbol), as in
// Reshape(Reshape(x, [0, 0, 4, 16]), [0, 0, 64]) after a dynamic export; -1 still resolves to the same
// size from the element count. With allowzero=1 a 0 is an empty dimension, not a copy: only s2 without 0.
#include <algorithm>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace reshape {
inline constexpr auto copies_only_dims_of_x = rewrite::fact<"copies_only_dims_of_x">(
    [](const Tensor& shape, const ValueView& reshaped, const ValueView& outer, const ValueView& x) {
      const auto values = int_values(shape);
      if (shape.type() != ElemType::Int64 || !values) return false;
      if (std::find(values->begin(), values->end(), 0) == values->end()) return true;
      if (int_attribute(rewrite::node_of(outer), "allowzero", 0) != 0 || !reshaped.shape() || !x.shape())
        return false;
      using rewrite::facts::dim;
      for (std::size_t i = 0; i < values->size(); ++i) {
        const auto axis = static_cast<int64_t>(i);
        if ((*values)[i] == 0 &&
            (i >= x.shape()->size() || !(dim(*reshaped.shape(), axis) == dim(*x.shape(), axis))))
          return false;
      }
      return true;
    });
}  // namespace reshape

inline rewrite::RulePtr reshape_reshape_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'f'> first_shape;
  Const<'s'> s;
  auto reshaped = named<'m'>(Reshape(x, first_shape));
  auto outer = named<'o'>(Reshape(reshaped, s));
  return rule("ReshapeReshape")
      .match(outer)
      .when(reshape::copies_only_dims_of_x(s, reshaped, outer, x))
      .to(Reshape(x, s));
}

}  // namespace xexp::patterns
