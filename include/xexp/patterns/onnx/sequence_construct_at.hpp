#pragma once
// SequenceConstructAt: SequenceAt(SequenceConstruct(x0, ..., xn-1), i) with a constant i is x_i: the
// sequence, built only to be taken apart again (a tuple through an exporter), goes with its last reader.
#include <optional>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr sequence_construct_at_rule() {
  using namespace rewrite::dsl;
  Const<'i'> index;
  auto sequence = named<'q'>(shared(SequenceConstruct(etc)));
  auto element = keep<'e'>(input_at(sequence, index));
  return rule("SequenceConstructAt")
      .priority(1)
      .match(SequenceAt(sequence, index))
      .when(element != ir::kNone)
      .to(found(element));
}

}  // namespace xexp::patterns
