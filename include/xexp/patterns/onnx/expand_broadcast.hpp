#pragma once
// ExpandBroadcast: Binary(Expand(X, s), Y) is Binary(X, Y) when broadcasting X against Y already gives
// the output shape: the Expand materializes a tensor the op would broadcast anyway. Checked on shapes,
// dimension by dimension (see is_broadcast_of). Binary: the element-wise arithmetic, logic and
// comparison ops; the Expand may feed either side; its shape s is a constant and its output is used once.
// A ConstantOfShape operand likewise becomes its value, a scalar, when the other operand alone has the
// output's shape (torch's backward graphs write ones_like(x) - y); it may feed several such ops.
#include "xexp/patterns/facts.hpp"
#include "xexp/patterns/op_families.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr expand_broadcast_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'y'> y;
  Const<'s'> s;
  Var<'z'> z;
  auto left = named<'o'>(op<kBroadcastBinary>(Expand(x, s), y));
  auto right = named<'o'>(op<kBroadcastBinary>(y, Expand(x, s)));
  auto fill = named<'f'>(shared(ConstantOfShape(z)));
  auto fill_left = named<'o'>(op<kBroadcastBinary>(fill, y));
  auto fill_right = named<'o'>(op<kBroadcastBinary>(y, fill));
  auto scalar_fill = fold(fill_scalar(fill));
  return rule("ExpandBroadcast")
      .priority(1)
      .cases(match(left).when(is_broadcast_of(left, x, y)).to(rebuild(left, x, y)),
             match(right).when(is_broadcast_of(right, x, y)).to(rebuild(right, y, x)),
             match(fill_left)
                 .when(fills_one_value(fill) && is_broadcast_of(fill_left, y))
                 .to(rebuild(fill_left, scalar_fill, y)),
             match(fill_right)
                 .when(fills_one_value(fill) && is_broadcast_of(fill_right, y))
                 .to(rebuild(fill_right, y, scalar_fill)));
}

}  // namespace xexp::patterns
