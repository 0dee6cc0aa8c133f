#pragma once
// ShapeBasedIdentity: a Slice with unit steps whose output has its input's shape (known dimensions,
// symbols compared by name) selects everything: it is the identity.
#include <algorithm>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace detail {
// The steps input (the fifth) is absent or a constant of ones.
inline constexpr auto unit_steps = rewrite::fact<"unit_steps">([](const ValueView& slice) {
  const ir::ValueId steps = rewrite::input_of(slice, 4);
  if (steps == ir::kNone) return true;
  std::optional<std::vector<int64_t>> values = int_constant(*slice.graph, steps);
  return values && std::all_of(values->begin(), values->end(), [](int64_t s) { return s == 1; });
});
}  // namespace detail

inline rewrite::RulePtr shape_based_identity_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  auto slice = named<'s'>(Slice(x, etc));
  return rule("ShapeBasedIdentity")
      .match(slice)
      .when(same_shape(x, slice) && detail::unit_steps(slice))
      .to(x);
}

}  // namespace xexp::patterns
