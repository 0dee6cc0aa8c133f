#pragma once
// SplitConcat: a Concat of all the outputs of a Split, in order and on the same axis, is the Split's
// input. Rule containment makes sure the Split outputs feed nothing else.
#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

namespace concat {
inline int64_t axis_in_rank(int64_t axis, const rewrite::ValueView& x) {
  return axis < 0 && x.shape() ? axis + static_cast<int64_t>(x.shape()->size()) : axis;
}
inline constexpr auto undoes_split =
    rewrite::fact<"undoes_split">([](const rewrite::ValueView& concat, const rewrite::ValueView& split,
                                     int64_t concat_axis, int64_t split_axis, const rewrite::ValueView& x) {
      return rewrite::node_of(concat).inputs == rewrite::node_of(split).outputs &&
             axis_in_rank(concat_axis, x) == axis_in_rank(split_axis, x);
    });
}  // namespace concat

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
      .when(concat::undoes_split(concat, split, concat_axis, split_axis, x))
      .to(x);
}

}  // namespace xexp::patterns
