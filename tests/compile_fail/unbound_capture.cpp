// Compiled by test_rewrite_compile_fail: a rule whose condition or replacement reads a capture the
// pattern never binds must not compile. Without a macro this file is the valid rule (the control).
#include "xexp/rewrite/dsl.hpp"

int main() {
  using namespace xexp::rewrite::dsl;
  Var<'x'> x;
  Var<'y'> y;
  Int<'t'> to;
#if defined(XEXP_UNBOUND_IN_CONDITION)
  RulePtr r = rule("Bad").match(Cast(x, attr<"to"> = to)).when(rank(y) == 2).to(x);
#elif defined(XEXP_UNBOUND_IN_REPLACEMENT)
  RulePtr r = rule("Bad").match(Cast(x, attr<"to"> = to)).to(Add(x, y));
#else
  RulePtr r = rule("Good").match(Cast(x, attr<"to"> = to)).when(dtype(x) == to).to(x);
  (void)y;
#endif
  return r->name().empty() ? 1 : 0;
}
