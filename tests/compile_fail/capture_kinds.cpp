// Compiled by test_rewrite_compile_fail: one letter bound as two kinds of capture (a value and an
// attribute share the slot index of their letter) must not compile. Without a macro this file is the
// valid rule (the control).
#include "xexp/rewrite/dsl.hpp"

int main() {
  using namespace xexp::rewrite::dsl;
  Var<'a'> a;
  Int<'t'> to;
#if defined(XEXP_VALUE_AND_ATTRIBUTE)
  Int<'a'> also_a;
  RulePtr r = rule("Bad").match(Cast(a, attr<"to"> = also_a)).to(a);
  (void)to;
#elif defined(XEXP_VALUE_AND_CONSTANT)
  Const<'a'> constant_a;
  RulePtr r = rule("Bad").match(Add(a, Cast(constant_a, attr<"to"> = to))).to(a);
#else
  RulePtr r = rule("Good").match(Cast(a, attr<"to"> = to)).when(dtype(a) == to).to(a);
#endif
  return r->name().empty() ? 1 : 0;
}
