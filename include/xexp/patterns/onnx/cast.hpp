#pragma once
// Cast: a Cast to the type its input already has does nothing.
#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr cast_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Int<'t'> to;
  return rule("Cast").match(Cast(x, attr<"to"> = to)).when(dtype(x) == to).to(x);
}

}  // namespace xexp::patterns
