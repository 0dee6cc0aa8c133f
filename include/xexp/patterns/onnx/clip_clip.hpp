#pragma once
// ClipClip: a Clip with only a min followed by a Clip with only a max (or the reverse) is one Clip.
// Clip(x, lo, hi) computes min(max(x, lo), hi), which is min-then-max for any bounds; max-then-min,
// max(min(x, hi), lo), differs when lo > hi, so that order needs both bounds constant with lo <= hi.
// Opset >= 11 (bounds as inputs).
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace elementwise {
// Which bounds a Clip gives: 1 only min, 2 only max, 0 both or none.
inline int only_bound(const ValueView& clip) {
  const bool lo = rewrite::input_of(clip, 1) != ir::kNone, hi = rewrite::input_of(clip, 2) != ir::kNone;
  return lo && !hi ? 1 : hi && !lo ? 2 : 0;
}
inline constexpr auto clips_merge =
    rewrite::fact<"clips_merge">([](const ValueView& outer, const ValueView& inner) {
      if (only_bound(inner) == 1 && only_bound(outer) == 2) return true;
      if (!(only_bound(inner) == 2 && only_bound(outer) == 1)) return false;
      std::optional<double> lo = scalar_constant(*outer.graph, rewrite::input_of(outer, 1));
      std::optional<double> hi = scalar_constant(*outer.graph, rewrite::input_of(inner, 2));
      return lo && hi && *lo <= *hi;
    });
}  // namespace elementwise

inline rewrite::RulePtr clip_clip_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Opt<'l'> lo;
  Opt<'h'> hi;
  Opt<'L'> lo_inner;
  Opt<'H'> hi_inner;
  // Clip(x, min, max), either bound omitted: an omitted one binds kNone and stays omitted when rebuilt.
  auto inner = named<'i'>(Clip(x, lo_inner, hi_inner));
  auto outer = named<'o'>(Clip(inner, lo, hi));
  return rule("ClipClip")
      .priority(1)
      .match(outer)
      .when(elementwise::clips_merge(outer, inner))
      .to(Clip(x, choose(present(lo), lo, lo_inner), choose(present(hi), hi, hi_inner)));
}

}  // namespace xexp::patterns
