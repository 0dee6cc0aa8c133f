#pragma once
// UnsqueezeReshape: Unsqueeze then a Reshape to a constant shape that only inserts one 1 into X's shape
// (at another place) is one Unsqueeze at that place. Shapes are compared dimension by dimension, symbols
// by name; unknown dimensions never match.
#include <vector>

#include "xexp/patterns/variadic_node.hpp"

namespace xexp::patterns {

namespace detail {
// The axis k such that the reshaped shape is X's shape with a 1 inserted at k, or -1.
inline int64_t inserted_axis(const rewrite::ValueView& x, const rewrite::ValueView& reshaped) {
  if (!x.shape() || !reshaped.shape() || reshaped.shape()->size() != x.shape()->size() + 1) return -1;
  const Shape& in = *x.shape();
  const Shape& out = *reshaped.shape();
  auto same = [](const Dim& a, const Dim& b) { return rewrite::facts::KnownDim{a} == rewrite::facts::KnownDim{b}; };
  for (std::size_t k = 0; k < out.size(); ++k) {
    if (!(out[k] == Dim(1))) continue;
    bool fits = true;
    for (std::size_t j = 0; j < in.size() && fits; ++j) fits = same(in[j], out[j < k ? j : j + 1]);
    if (fits) return static_cast<int64_t>(k);
  }
  return -1;
}
}  // namespace detail

inline rewrite::RulePtr unsqueeze_reshape_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Const<'s'> shape;
  // variadic: the Unsqueeze with or without its axes input; the Reshape to read its output shape.
  auto unsqueeze = variadic<'u', "Unsqueeze">(x);
  auto reshape = variadic<'r', "Reshape">(unsqueeze, shape);
  auto axis = call("inserted_axis", detail::inserted_axis, x, reshape);
  return rule("UnsqueezeReshape")
      .match(reshape)
      .when(axis >= 0)
      .to(Unsqueeze(x, attr<"axes"> = call("list", [](int64_t a) { return std::vector<int64_t>{a}; }, axis)));
}

}  // namespace xexp::patterns
