#pragma once
// ShapeBasedIdentity: a Slice with unit steps whose output has its input's shape (known dimensions,
// symbols compared by name) selects everything: it is the identity.
#include <algorithm>

#include "xexp/patterns/constant_facts.hpp"
#include "xexp/patterns/variadic_node.hpp"

namespace xexp::patterns {

namespace detail {
// The steps input is absent or a constant of ones.
inline bool unit_steps(const rewrite::ValueView& slice) {
  const ir::ValueId steps = input_of(slice, 4);
  if (steps == ir::kNone) return true;
  std::optional<std::vector<int64_t>> values = int_constant(*slice.graph, steps);
  return values && std::all_of(values->begin(), values->end(), [](int64_t s) { return s == 1; });
}
}  // namespace detail

inline rewrite::RulePtr shape_based_identity_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  auto slice = variadic<'s', "Slice">(x);
  return rule("ShapeBasedIdentity")
      .priority(0)
      .match(slice)
      .when(same_shape(x, slice) && call("unit_steps", detail::unit_steps, slice))
      .to(x);
}

}  // namespace xexp::patterns
