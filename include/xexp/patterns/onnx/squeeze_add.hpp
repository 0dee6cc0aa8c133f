#pragma once
// SqueezeAdd: Add(Squeeze(a), Squeeze(b)) where a and b have the same one-element shape and both Squeezes
// give the same shape is Squeeze(Add(a, b)) with the first Squeeze's axes: one Squeeze instead of two.
// Opset >= 13 (axes as an input).
#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

namespace detail {
inline constexpr auto one_element = rewrite::fact<"one_element">([](const rewrite::ValueView& v) {
  return v.shape() && is_static(*v.shape()) && element_count(*v.shape()) == 1;
});
}  // namespace detail

inline rewrite::RulePtr squeeze_add_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Opt<'A'> a_axes;
  Opt<'B'> b_axes;
  auto left = named<'l'>(Squeeze(a, a_axes));
  auto right = named<'r'>(Squeeze(b, b_axes));
  return rule("SqueezeAdd")
      .priority(0)
      .match(Add(left, right))
      .when(opset_at_least(13) && same_shape(a, b) && detail::one_element(a) && same_shape(left, right))
      .to(Squeeze(Add(a, b), a_axes));
}

}  // namespace xexp::patterns
