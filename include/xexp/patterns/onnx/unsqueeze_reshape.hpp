#pragma once
// UnsqueezeReshape: Unsqueeze then a Reshape to a constant shape that only inserts one 1 into X's shape
// (at another place) is one Unsqueeze at that place. Shapes are compared dimension by dimension, symbols
// by name; unknown dimensions never match.
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace detail {
// {k}: the reshaped shape is X's shape with a 1 inserted at axis k; {} when there is no such axis.
inline constexpr auto inserted_axis =
    rewrite::fact<"inserted_axis">([](const ValueView& x, const ValueView& reshaped) -> std::vector<int64_t> {
      if (!x.shape() || !reshaped.shape() || reshaped.shape()->size() != x.shape()->size() + 1) return {};
      const Shape& in = *x.shape();
      const Shape& out = *reshaped.shape();
      auto same = [](const Dim& a, const Dim& b) {
        return rewrite::facts::KnownDim{a} == rewrite::facts::KnownDim{b};
      };
      for (std::size_t k = 0; k < out.size(); ++k) {
        if (!(out[k] == Dim(1))) continue;
        bool fits = true;
        for (std::size_t j = 0; j < in.size() && fits; ++j) fits = same(in[j], out[j < k ? j : j + 1]);
        if (fits) return {static_cast<int64_t>(k)};
      }
      return {};
    });
}  // namespace detail

inline rewrite::RulePtr unsqueeze_reshape_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Const<'s'> shape;
  auto unsqueeze = Unsqueeze(x, etc);  // with or without its axes input
  auto reshape = named<'r'>(Reshape(unsqueeze, shape));
  auto axes = detail::inserted_axis(x, reshape);
  return rule("UnsqueezeReshape")
      .match(reshape)
      .when(axes != std::vector<int64_t>{})
      .to(Unsqueeze(x, attr<"axes"> = axes));
}

}  // namespace xexp::patterns
