#pragma once
// Reshape2Of3: Reshape(Binary(Reshape(X, s), Y), t) where nothing broadcasts (Y and the inner Reshape of
// X have the binary's shape) and t gives X's shape back: the binary can work in X's shape, on X and
// Reshape(Y, t), so that of three Reshapes around the binary one is left. Binary is Add, Sub, Mul or
// Div, X on either side.
#include "xexp/patterns/facts.hpp"
#include "xexp/patterns/op_families.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr reshape2_of3_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'y'> y;
  Var<'s'> s;
  Var<'t'> t;
  auto rx = named<'r'>(Reshape(x, s));
  auto x_first = named<'b'>(op<kBinaryArithmetic>(rx, y));
  auto x_second = named<'b'>(op<kBinaryArithmetic>(y, rx));
  auto out_first = named<'o'>(Reshape(x_first, t));
  auto out_second = named<'o'>(Reshape(x_second, t));
  auto no_broadcast = same_shape(rx, y) && same_shape(x_first, y);
  auto no_broadcast2 = same_shape(rx, y) && same_shape(x_second, y);
  return rule("Reshape2Of3")
      .priority(1)
      .cases(match(out_first)
                 .when(no_broadcast && same_shape(out_first, x))
                 .to(rebuild(x_first, x, Reshape(y, t))),
             match(out_second)
                 .when(no_broadcast2 && same_shape(out_second, x))
                 .to(rebuild(x_second, Reshape(y, t), x)));
}

}  // namespace xexp::patterns
