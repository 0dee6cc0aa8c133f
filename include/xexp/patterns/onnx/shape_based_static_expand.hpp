#pragma once
// ShapeBasedStaticExpand: Expand(X, computed shape) whose input and output shapes are known enough
// becomes Expand(X, constant): 1 where the dimension does not change, the static size where it does.
// The computation of the shape can then go. Same rank in and out.
#include <optional>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace shape {
inline constexpr auto static_expand_shape = rewrite::fact<"static_expand_shape">(
    [](const ValueView& x, const ValueView& out) -> std::optional<std::vector<int64_t>> {
      if (!x.shape() || !out.shape() || x.shape()->size() != out.shape()->size()) return std::nullopt;
      std::vector<int64_t> target;
      for (std::size_t k = 0; k < x.shape()->size(); ++k) {
        const Dim& in = (*x.shape())[k];
        const Dim& o = (*out.shape())[k];
        if (rewrite::facts::KnownDim{in} == rewrite::facts::KnownDim{o})
          target.push_back(1);
        else if (o.is_static())
          target.push_back(o.value());
        else
          return std::nullopt;
      }
      return target;
    });
}  // namespace shape

inline rewrite::RulePtr shape_based_static_expand_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'s'> shape;
  auto expand = named<'e'>(Expand(x, shape));
  auto target = shape::static_expand_shape(x, expand);
  return rule("ShapeBasedStaticExpand")
      .match(expand)
      .when(!is_constant(shape) && has_value(target))
      .to(Expand(x, fold(as_tensor(target))));
}

}  // namespace xexp::patterns
