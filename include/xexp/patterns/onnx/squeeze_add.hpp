#pragma once
// SqueezeAdd: Add(Squeeze(a), Squeeze(b)) where a and b have the same one-element shape and both Squeezes
// give the same shape is Squeeze(Add(a, b)) with the first Squeeze's axes: one Squeeze instead of two.
// Opset >= 13 (axes as an input).
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

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
      .when(opset_at_least(13) && same_shape(a, b) && has_one_element(a) && same_shape(left, right))
      .to(Squeeze(Add(a, b), a_axes));
}

}  // namespace xexp::patterns
