#pragma once
// Dropout: in inference mode (no training_mode input, or a constant false one) or with a constant ratio
// of 0, Dropout returns its input. The mask output must be unused (rule containment checks it); a
// Dropout in training mode stays. Opsets 7-11 have no training flag (always inference); opset < 7's is_test
// attribute is honoured.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace elementwise {
inline constexpr auto dropout_is_identity = rewrite::fact<"dropout_is_identity">([](const ValueView& d) {
  const ir::Node& n = rewrite::node_of(d);
  if (const ir::Attribute* is_test = n.attribute(Symbol("is_test")); is_test && is_test->i == 0) return false;
  const ir::ValueId ratio = rewrite::input_of(d, 1), training = rewrite::input_of(d, 2);
  if (training == ir::kNone) return true;
  if (std::optional<double> flag = scalar_constant(*d.graph, training); flag && *flag == 0) return true;
  std::optional<double> r = scalar_constant(*d.graph, ratio);
  return r && *r == 0;
});
}  // namespace elementwise

inline rewrite::RulePtr dropout_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  auto dropout = named<'d'>(Dropout(x, etc));  // ratio and training_mode are optional inputs
  return rule("Dropout").priority(1).match(dropout).when(elementwise::dropout_is_identity(dropout)).to(x);
}

}  // namespace xexp::patterns
