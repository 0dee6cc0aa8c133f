#pragma once
// Reshape and Expand to the shape the input already has do nothing (the input's shape static, the
// requested shape a constant spelling exactly those dims). Nor does one whose output has its input's
// shape, symbols compared by name: dynamic exports expand to (1, heads, sequence, head_size) a value
// already (batch, heads, sequence, head_size) (broadcasting never shrinks), and reshape to (-1, hidden)
// a value already (batch*sequence, hidden) (a Reshape keeps the order of the elements).
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr reshape_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Const<'s'> s;
  Var<'t'> t;
  auto reshape = named<'r'>(Reshape(x, t));
  return rule("Reshape").cases(match(Reshape(x, s)).when(same_static_dims(x, s)).to(x),
                               match(reshape).when(same_shape(x, reshape)).to(x));
}
inline rewrite::RulePtr expand_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Const<'s'> s;
  Var<'t'> t;
  auto expand = named<'e'>(Expand(x, t));
  return rule("Expand").cases(match(Expand(x, s)).when(same_static_dims(x, s)).to(x),
                              match(expand).when(same_shape(x, expand)).to(x));
}

}  // namespace xexp::patterns
