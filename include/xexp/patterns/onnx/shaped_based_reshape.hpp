#pragma once
// ShapedBasedReshape (experimental-experiment's spelling of the name): Reshape(X, [d0, ..., k]) with as
// many values as X has dimensions, each di but the last 0 or X's static dimension i, and k != 0 keeps every
// dimension but the last, and the last is then X's own (the element count decides it): the Reshape does
// nothing ([0, 0, 64] or [2, 0, 64] on X (2, seq, 64)). Needs allowzero=0 (0 copies the input dimension).
#include <optional>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace reshape {
inline constexpr auto keeps_all_but_last =
    rewrite::fact<"keeps_all_but_last">([](const Tensor& t, const ValueView& x) {
      std::optional<std::vector<int64_t>> v = int_values(t);
      if (t.type() != ElemType::Int64 || !v || !x.shape() || v->size() != x.shape()->size() || v->empty() ||
          v->back() == 0)
        return false;
      for (std::size_t k = 0; k + 1 < v->size(); ++k)
        if ((*v)[k] != 0 && !(rewrite::facts::dim(*x.shape(), static_cast<int64_t>(k)) == (*v)[k]))
          return false;
      return true;
    });
}  // namespace reshape

inline rewrite::RulePtr shaped_based_reshape_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Const<'s'> shape;
  return rule("ShapedBasedReshape")
      .match(Reshape(x, shape, attr<"allowzero"> = 0))
      .when(reshape::keeps_all_but_last(shape, x))
      .to(x);
}

}  // namespace xexp::patterns
