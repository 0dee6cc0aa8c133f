#pragma once
// ShapeBasedReshapeIsSqueeze: a Reshape whose output is its input with dimensions of size 1 inserted
// (or removed) is an Unsqueeze (or a Squeeze) with constant axes, which later rules understand better
// (UnsqueezeUnsqueeze, SqueezeUnsqueeze). Input and output shapes known; opset >= 18.
#include <optional>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace reshape {
struct SqueezeAxes {
  bool unsqueeze;  // axes inserted (positions in the output), else removed (positions in the input)
  std::vector<int64_t> axes;
};
// Aligns the shapes dimension by dimension; nullopt when the Reshape does anything else.
inline std::optional<SqueezeAxes> squeeze_axes_of(const ValueView& x, const ValueView& out) {
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
inline constexpr auto reshape_as_squeeze = rewrite::fact<"reshape_as_squeeze">(squeeze_axes_of);
inline constexpr auto inserts =
    rewrite::fact<"inserts">([](const std::optional<SqueezeAxes>& s) { return s->unsqueeze; });
inline constexpr auto axes_of =
    rewrite::fact<"axes">([](const std::optional<SqueezeAxes>& s) { return int64_tensor(s->axes); });
}  // namespace reshape

inline rewrite::RulePtr shape_based_reshape_is_squeeze_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'s'> shape;
  auto reshape = named<'r'>(Reshape(x, shape));
  auto plan = reshape::reshape_as_squeeze(x, reshape);
  auto axes = fold(reshape::axes_of(plan));
  return rule("ShapeBasedReshapeIsSqueeze")
      .match(reshape)
      .when(opset_at_least(18) && has_value(plan))
      .to(choose(reshape::inserts(plan), Unsqueeze(x, axes), Squeeze(x, axes)));
}

}  // namespace xexp::patterns
