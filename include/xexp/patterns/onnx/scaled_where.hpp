#pragma once
// ScaledWhere: a Where choosing between x and a one-element constant fill, then scaled by a one-element
// constant, scales x and the fill instead: Div(Where(c, x, fill), s) is Where(c, Div(x, s), Div(fill, s))
// (the second Div folds), Mul alike. GPT-J masks its attention scores before dividing them by
// sqrt(head_size); once the scale sits next to the product, the attention rules find the mask after it.
// Every element is the same operation on the same operands as before, so nothing rounds differently, and
// the result is the broadcast of c, x, fill and s either way.
#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr scaled_where_rule() {
  using namespace rewrite::dsl;
  Var<'c'> c;
  Var<'x'> x;
  Const<'f'> fill;
  Const<'s'> s;
  auto fill_if_false = named<'o'>(op<"Div|Mul">(Where(c, x, fill), s));
  auto fill_if_true = named<'o'>(op<"Div|Mul">(Where(c, fill, x), s));
  return rule("ScaledWhere")
      .priority(1)
      .cases(match(fill_if_false)
                 .when(is_scalar(fill) && is_scalar(s))
                 .to(Where(c, rebuild(fill_if_false, x, s), rebuild(fill_if_false, fill, s))),
             match(fill_if_true)
                 .when(is_scalar(fill) && is_scalar(s))
                 .to(Where(c, rebuild(fill_if_true, fill, s), rebuild(fill_if_true, x, s))));
}

}  // namespace xexp::patterns
