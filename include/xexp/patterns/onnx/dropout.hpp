#pragma once
// Dropout: in inference mode (no training_mode input, or a constant false one) or with a constant ratio
// of 0, Dropout returns its input. The mask output must be unused (rule containment checks it); a
// Dropout in training mode stays. Opsets 7-11 have no training flag (always inference); opset < 7's is_test
// attribute is honoured.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr dropout_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Opt<'r'> ratio;
  Opt<'t'> training;
  auto dropout = named<'d'>(Dropout(x, ratio, training));
  // is_test=0, written, is opset < 7's training mode.
  return rule("Dropout")
      .priority(1)
      .match(dropout)
      .when(int_attribute_of(dropout, "is_test", 1) != 0 &&
            (absent_or_zero(training) || scalar_is(ratio, 0.0)))
      .to(x);
}

}  // namespace xexp::patterns
