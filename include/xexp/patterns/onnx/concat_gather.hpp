#pragma once
// ConcatGather: Gather([i]) of a Concat of (1,)-shaped parts (a shape being assembled) is part i.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr concat_gather_rule() {
  using namespace rewrite::dsl;
  Const<'i'> index;
  auto concat = named<'c'>(shared(Concat(etc)));
  // The part an integer index of shape (1,) picks (input_at: negative counts from the end).
  auto picked = keep<'p'>(input_at(concat, index));
  return rule("ConcatGather")
      .match(Gather(concat, index, attr<"axis"> = 0))
      .when(rank(index) == 1 && parts_are_single(concat) && picked != ir::kNone)
      .to(found(picked));
}

}  // namespace xexp::patterns
