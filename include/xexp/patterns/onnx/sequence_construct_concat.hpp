#pragma once
// SequenceConstructConcat: ConcatFromSequence(SequenceConstruct(x0, ..., xn-1), axis) with new_axis 0 is
// Concat(x0, ..., xn-1, axis): exporters write torch.cat this way (onnxscript's aten_cat), and a sequence
// built only to be concatenated is two nodes for one. The SequenceConstruct goes with its last reader.
// With new_axis 1 (torch.stack) the Concat would need an Unsqueeze per input: more nodes, left alone.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr sequence_construct_concat_rule() {
  using namespace rewrite::dsl;
  Int<'a'> axis;
  auto sequence = named<'q'>(shared(SequenceConstruct(etc)));
  return rule("SequenceConstructConcat")
      .priority(1)
      .match(ConcatFromSequence(sequence, attr<"axis"> = axis, attr<"new_axis"> = 0))
      .to(Concat(spread(inputs_of(sequence)), attr<"axis"> = axis));
}

}  // namespace xexp::patterns
