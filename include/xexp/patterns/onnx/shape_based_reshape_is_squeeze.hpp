#pragma once
// ShapeBasedReshapeIsSqueeze: a Reshape whose output is its input with dimensions of size 1 inserted
// (or removed) is an Unsqueeze (or a Squeeze) with constant axes, which later rules understand better
// (UnsqueezeUnsqueeze, SqueezeUnsqueeze). Input and output shapes known; opset >= 18.
#include <optional>
#include <vector>

#include "xexp/patterns/constant_math.hpp"
#include "xexp/patterns/variadic_node.hpp"

namespace xexp::patterns {

namespace detail {
struct SqueezeAxes {
  bool unsqueeze;  // axes inserted (positions in the output), else removed (positions in the input)
  std::vector<int64_t> axes;
};
// Aligns the shapes dimension by dimension; nullopt when the Reshape does anything else.
inline std::optional<SqueezeAxes> reshape_as_squeeze(const rewrite::ValueView& x, const rewrite::ValueView& out) {
  if (!x.shape() || !out.shape() || x.shape()->size() == out.shape()->size()) return std::nullopt;
  const Shape& in = *x.shape();
  const Shape& o = *out.shape();
  const bool unsqueeze = o.size() > in.size();
  const Shape& longer = unsqueeze ? o : in;
  const Shape& shorter = unsqueeze ? in : o;
  SqueezeAxes result{unsqueeze, {}};
  std::size_t j = 0;
  for (std::size_t k = 0; k < longer.size(); ++k) {
    if (j < shorter.size() && rewrite::facts::KnownDim{longer[k]} == rewrite::facts::KnownDim{shorter[j]}) {
      ++j;
    } else if (longer[k].is_static() && longer[k].value() == 1) {
      result.axes.push_back(static_cast<int64_t>(k));
    } else {
      return std::nullopt;
    }
  }
  if (j != shorter.size()) return std::nullopt;
  return result;
}
inline std::optional<ir::ValueId> squeeze_instead(rewrite::Rewriter& r, const rewrite::ValueView& x,
                                                  const rewrite::ValueView& out) {
  std::optional<SqueezeAxes> s = reshape_as_squeeze(x, out);
  if (!s) return std::nullopt;
  return r.node(Symbol(s->unsqueeze ? "Unsqueeze" : "Squeeze"), {x.id, r.initializer(int64_tensor(s->axes))});
}
}  // namespace detail

inline rewrite::RulePtr shape_based_reshape_is_squeeze_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  auto reshape = variadic<'r', "Reshape">(x);
  auto fits = call("reshape_as_squeeze", [](const ValueView& in, const ValueView& out) {
    return detail::reshape_as_squeeze(in, out).has_value();
  }, x, reshape);
  return rule("ShapeBasedReshapeIsSqueeze")
      .priority(0)
      .match(reshape)
      .when(opset_at_least(18) && fits)
      .to(replace_with("squeeze_instead", detail::squeeze_instead, x, reshape));
}

}  // namespace xexp::patterns
