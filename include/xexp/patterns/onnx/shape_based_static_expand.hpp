#pragma once
// ShapeBasedStaticExpand: Expand(X, computed shape) whose input and output shapes are known enough
// becomes Expand(X, constant): 1 where the dimension does not change, the static size where it does.
// The computation of the shape can then go. Same rank in and out.
#include <optional>
#include <vector>

#include "xexp/patterns/constant_math.hpp"
#include "xexp/patterns/variadic_node.hpp"

namespace xexp::patterns {

namespace detail {
inline std::optional<std::vector<int64_t>> static_expand_shape(const rewrite::ValueView& x,
                                                               const rewrite::ValueView& out) {
  if (!x.shape() || !out.shape() || x.shape()->size() != out.shape()->size()) return std::nullopt;
  std::vector<int64_t> target;
  for (std::size_t k = 0; k < x.shape()->size(); ++k) {
    const Dim& in = (*x.shape())[k];
    const Dim& o = (*out.shape())[k];
    if (rewrite::facts::KnownDim{in} == rewrite::facts::KnownDim{o}) target.push_back(1);
    else if (o.is_static()) target.push_back(o.value());
    else return std::nullopt;
  }
  return target;
}
}  // namespace detail

inline rewrite::RulePtr shape_based_static_expand_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'s'> shape;
  auto expand = variadic<'e', "Expand">(x, shape);
  auto target = call("static_expand_shape", detail::static_expand_shape, x, expand);
  return rule("ShapeBasedStaticExpand")
      .priority(0)
      .match(expand)
      .when(!is_constant(shape) &&
            call("has_value", [](const std::optional<std::vector<int64_t>>& t) { return t.has_value(); }, target))
      .to(Expand(x, fold(call("as_tensor", [](const std::optional<std::vector<int64_t>>& t) { return int64_tensor(*t); },
                              target))));
}

}  // namespace xexp::patterns
