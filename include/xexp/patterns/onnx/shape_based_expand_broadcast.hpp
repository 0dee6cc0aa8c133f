#pragma once
// ShapeBasedExpandBroadcast: like ExpandBroadcast, with any Expand shape (computed at run time) and an
// Expand on one or both sides: Binary(Expand(X, s), Expand(Y, t)) is Binary(X, Y) when broadcasting X
// against Y already gives the output shape (known shapes, same rank, see detail::broadcasts_to).
#include "xexp/patterns/onnx/expand_broadcast.hpp"

namespace xexp::patterns {

namespace detail {
template <rewrite::FixedString... Ops>
rewrite::RulePtr shape_based_expand_broadcast_cases(OpList<Ops...>) {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'y'> y;
  Var<'s'> s;
  Var<'t'> t;
  auto rebuilt = [](Rewriter& r, const ValueView& binary, const ValueView& a, const ValueView& b) {
    return binary_on(r, binary, a.id, b.id);
  };
  auto fits = [&](auto binary) { return call("broadcasts_to", broadcasts_to, x, y, binary); };
  auto one_case = [&](auto binary) {
    return match(binary).when(fits(binary)).to(replace_with("binary_on", rebuilt, binary, x, y));
  };
  return rule("ShapeBasedExpandBroadcast")
      .priority(1)
      .cases(one_case(variadic<'o', Ops>(Expand(x, s), Expand(y, t)))...,
             one_case(variadic<'o', Ops>(Expand(x, s), y))..., one_case(variadic<'o', Ops>(x, Expand(y, t)))...);
}
}  // namespace detail

inline rewrite::RulePtr shape_based_expand_broadcast_rule() {
  return detail::shape_based_expand_broadcast_cases(detail::BroadcastOps{});
}

}  // namespace xexp::patterns
