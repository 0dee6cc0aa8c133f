#pragma once
// SequenceConstructAt: SequenceAt(SequenceConstruct(x0, ..., xn-1), i) with a constant i is x_i: the
// sequence, built only to be taken apart again (a tuple through an exporter), goes with its last reader.
#include <optional>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace detail {
// Element i (negative counts from the end) of the SequenceConstruct, or kNone when i is out of range or
// not one integer.
inline ir::ValueId constructed_element(const ValueView& sequence, const Tensor& index) {
  const ir::Node& n = rewrite::node_of(sequence);
  const std::optional<std::vector<int64_t>> i = int_values(index);
  if (!i || i->size() != 1) return ir::kNone;
  const auto count = static_cast<int64_t>(n.inputs.size());
  const int64_t k = (*i)[0] < 0 ? (*i)[0] + count : (*i)[0];
  return k >= 0 && k < count ? n.inputs[k] : ir::kNone;
}
inline constexpr auto element_at = rewrite::fact<"element_at">(constructed_element);
}  // namespace detail

inline rewrite::RulePtr sequence_construct_at_rule() {
  using namespace rewrite::dsl;
  Const<'i'> index;
  auto sequence = named<'q'>(shared(SequenceConstruct(etc)));
  auto element = keep<'e'>(detail::element_at(sequence, index));
  return rule("SequenceConstructAt")
      .priority(1)
      .match(SequenceAt(sequence, index))
      .when(element != ir::kNone)
      .to(found(element));
}

}  // namespace xexp::patterns
