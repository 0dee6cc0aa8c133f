#pragma once
// NotNot: Not(Not(x)) is x. The inner Not stays when something else reads it.
#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr not_not_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  return rule("NotNot").priority(1).match(Not(shared(Not(x)))).to(x);
}

}  // namespace xexp::patterns
