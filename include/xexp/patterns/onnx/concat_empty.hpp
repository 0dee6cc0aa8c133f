#pragma once
// ConcatEmpty: a Concat input of size 0 along the axis adds nothing: the Concat goes on without it, or
// becomes its only remaining input.
#include <optional>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace concat {
// The Concat inputs that are not known to be empty along `axis`.
inline std::vector<ir::ValueId> non_empty_parts(const ValueView& concat, int64_t axis) {
  const ir::Graph& g = *concat.graph;
  std::vector<ir::ValueId> kept;
  for (ir::ValueId in : rewrite::node_of(concat).inputs) {
    const std::optional<Shape>& s = g.value(in).shape;
    const auto rank = s ? static_cast<int64_t>(s->size()) : 0;
    const int64_t a = axis < 0 ? axis + rank : axis;
    const bool empty = s && a >= 0 && a < rank && (*s)[a].is_static() && (*s)[a].value() == 0;
    if (!empty) kept.push_back(in);
  }
  return kept;
}
inline constexpr auto parts_not_empty = rewrite::fact<"parts_not_empty">(non_empty_parts);
inline constexpr auto drops_some_but_not_all = rewrite::fact<"drops_some_but_not_all">(
    [](const std::vector<ir::ValueId>& kept, const ValueView& concat) {
      return !kept.empty() && kept.size() < rewrite::node_of(concat).inputs.size();
    });
inline constexpr auto is_single =
    rewrite::fact<"is_single">([](const std::vector<ir::ValueId>& kept) { return kept.size() == 1; });
inline constexpr auto first_of =
    rewrite::fact<"first_of">([](const std::vector<ir::ValueId>& kept) { return kept.front(); });
}  // namespace concat

inline rewrite::RulePtr concat_empty_rule() {
  using namespace rewrite::dsl;
  Int<'a'> axis;
  auto concat = named<'c'>(Concat(etc, attr<"axis"> = axis));
  auto kept = keep<'k'>(concat::parts_not_empty(concat, axis));
  return rule("ConcatEmpty")
      .priority(1)
      .match(concat)
      .when(concat::drops_some_but_not_all(kept, concat))
      .to(choose(concat::is_single(kept), found(concat::first_of(kept)),
                 Concat(spread(kept), attr<"axis"> = axis)));
}

}  // namespace xexp::patterns
