#pragma once
// Dropout: in inference mode (no training_mode input, or a constant false one) or with a constant ratio
// of 0, Dropout returns its input. The mask output must be unused (rule containment checks it). The
// original read input 2 twice and removed every Dropout, training or not; this one keeps training ones.
// Opsets 7-11 have no training flag (always inference); opset < 7's is_test attribute is honoured.
#include "xexp/patterns/constant_facts.hpp"
#include "xexp/patterns/variadic_node.hpp"

namespace xexp::patterns {

namespace detail {
inline bool dropout_is_identity(const rewrite::ValueView& d) {
  const ir::Node& n = node_of(d);
  if (const ir::Attribute* is_test = n.attribute(Symbol("is_test")); is_test && is_test->i == 0) return false;
  const ir::ValueId ratio = input_of(d, 1), training = input_of(d, 2);
  if (training == ir::kNone) return true;
  if (std::optional<double> flag = scalar_constant(*d.graph, training); flag && *flag == 0) return true;
  std::optional<double> r = scalar_constant(*d.graph, ratio);
  return r && *r == 0;
}
}  // namespace detail

inline rewrite::RulePtr dropout_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  // variadic: ratio and training_mode are optional inputs, op<...> would fix their number.
  auto dropout = variadic<'d', "Dropout">(x);
  return rule("Dropout")
      .priority(1)
      .match(dropout)
      .when(call("is_identity", detail::dropout_is_identity, dropout))
      .to(x);
}

}  // namespace xexp::patterns
