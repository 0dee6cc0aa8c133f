#pragma once
// ConvBiasNull: a Conv whose bias is a constant of zeros computes the same without it.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr conv_bias_null_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'w'> w;
  Const<'b'> b;
  // rebuild: the new Conv keeps every attribute of the old one, present or not (absent attributes
  // without a schema default would not match an attr<...> capture).
  auto conv = named<'c'>(Conv(x, w, b));
  return rule("ConvBiasNull").match(conv).when(all_zero(b)).to(rebuild(conv, x, w));
}

}  // namespace xexp::patterns
