#pragma once
// ShapeBasedIdentity: a Slice with unit steps whose output has its input's shape (known dimensions,
// symbols compared by name) selects everything: it is the identity.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr shape_based_identity_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  auto slice = named<'s'>(Slice(x, etc));
  return rule("ShapeBasedIdentity")
      .match(slice)
      .when(same_shape(x, slice) && unit_steps(slice))
      .to(x);
}

}  // namespace xexp::patterns
