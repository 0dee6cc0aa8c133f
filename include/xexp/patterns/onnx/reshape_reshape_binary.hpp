#pragma once
// ReshapeReshapeBinary: Binary(Reshape(X, s), Reshape(Y, s)) with X and Y of the same known shape and
// the same constant s is Reshape(Binary(X, Y), s): one Reshape instead of two. Binary is Add, Sub, Mul
// or Div; both Reshapes have allowzero=0 and are used once.
#include "xexp/patterns/constant_math.hpp"
#include "xexp/patterns/root_family.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr reshape_reshape_binary_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'y'> y;
  Const<'s'> s;
  Const<'t'> t;
  auto same_values = [](const Tensor& a, const Tensor& b) {
    std::optional<std::vector<int64_t>> va = int64_values(a);
    return va && va == int64_values(b);
  };
  auto left = Reshape(x, s, attr<"allowzero"> = 0);
  auto right = Reshape(y, t, attr<"allowzero"> = 0);
  return for_each_root(OpList<"Add", "Sub", "Mul", "Div">{}, rule("ReshapeReshapeBinary").priority(1),
                       [&]<rewrite::FixedString Op>() {
    return match(op<Op>(left, right))
        .when(same_shape(x, y) && call("same_values", same_values, s, t))
        .to(Reshape(op<Op>(x, y), s));
  });
}

}  // namespace xexp::patterns
