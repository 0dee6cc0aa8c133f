#pragma once
// ConcatEmpty: a Concat input of size 0 along the axis adds nothing: the Concat goes on without it, or
// becomes its only remaining input.
#include <optional>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace detail {
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
inline constexpr auto drops_some_but_not_all =
    rewrite::fact<"drops_some_but_not_all">([](const ValueView& concat, int64_t axis) {
      const std::size_t kept = non_empty_parts(concat, axis).size();
      return kept > 0 && kept < rewrite::node_of(concat).inputs.size();
    });
}  // namespace detail

inline rewrite::RulePtr concat_empty_rule() {
  using namespace rewrite::dsl;
  Int<'a'> axis;
  auto concat = named<'c'>(Concat(etc, attr<"axis"> = axis));
  // A lambda: the new Concat has as many inputs as remain, which a node pattern cannot say.
  auto without_empty = [](Rewriter& r, const ValueView& c, int64_t a) -> std::optional<ir::ValueId> {
    std::vector<ir::ValueId> kept = detail::non_empty_parts(c, a);
    if (kept.size() == 1) return kept[0];
    return r.node(Symbol("Concat"), std::move(kept), {ir::Attribute::make_int(Symbol("axis"), a)});
  };
  return rule("ConcatEmpty")
      .priority(1)
      .match(concat)
      .when(detail::drops_some_but_not_all(concat, axis))
      .to(replace_with("concat_without_empty", without_empty, concat, axis));
}

}  // namespace xexp::patterns
