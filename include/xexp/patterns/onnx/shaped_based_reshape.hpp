#pragma once
// ShapedBasedReshape (experimental-experiment's spelling of the name): Reshape(X, [0, ..., 0, k]) with as
// many values as X has dimensions and k != 0 keeps every dimension but the last, and the last is then X's own
// (the element count decides it): the Reshape does nothing. Needs allowzero=0 (0 copies the input dimension).
#include <optional>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace detail {
inline constexpr auto keeps_all_but_last =
    rewrite::fact<"keeps_all_but_last">([](const Tensor& t, int64_t rank) {
      std::optional<std::vector<int64_t>> v = int_values(t);
      if (t.type() != ElemType::Int64 || !v || static_cast<int64_t>(v->size()) != rank || v->empty() ||
          v->back() == 0)
        return false;
      for (std::size_t k = 0; k + 1 < v->size(); ++k)
        if ((*v)[k] != 0) return false;
      return true;
    });
}  // namespace detail

inline rewrite::RulePtr shaped_based_reshape_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Const<'s'> shape;
  return rule("ShapedBasedReshape")
      .match(Reshape(x, shape, attr<"allowzero"> = 0))
      .when(detail::keeps_all_but_last(shape, rank(x)))
      .to(x);
}

}  // namespace xexp::patterns
