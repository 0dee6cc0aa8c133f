#pragma once
// NotWhere: Where(Not(c), a, b) is Where(c, b, a). Only when the Not has no other consumer, otherwise
// nothing is saved.
#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr not_where_rule() {
  using namespace rewrite::dsl;
  Var<'c'> c;
  Var<'a'> a;
  Var<'b'> b;
  return rule("NotWhere").priority(1).match(Where(Not(c), a, b)).to(Where(c, b, a));
}

}  // namespace xexp::patterns
