#pragma once
// SplitConcat: a Concat of all the outputs of a Split, in order and on the same axis, is the Split's
// input. Rule containment makes sure the Split outputs feed nothing else.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr split_concat_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Int<'C'> concat_axis;
  Int<'S'> split_axis;
  // etc: a Concat has any number of inputs, a Split an optional `split` input.
  auto split = named<'s'>(Split(x, etc, attr<"axis"> = split_axis));
  auto concat = named<'c'>(Concat(split, etc, attr<"axis"> = concat_axis));
  return rule("SplitConcat")
      .priority(1)
      .match(concat)
      .when(inputs_of(concat) == outputs_of(split) && axis_in(concat_axis, x) == axis_in(split_axis, x))
      .to(x);
}

}  // namespace xexp::patterns
