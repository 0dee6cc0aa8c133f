#pragma once
// ClipClip: a Clip with only a min followed by a Clip with only a max (or the reverse) is one Clip.
// Clip(x, lo, hi) computes min(max(x, lo), hi), which is min-then-max for any bounds; max-then-min,
// max(min(x, hi), lo), differs when lo > hi, so that order needs both bounds constant with lo <= hi.
// Opset >= 11 (bounds as inputs).
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr clip_clip_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Opt<'l'> lo;
  Opt<'h'> hi;
  Opt<'L'> lo_inner;
  Opt<'H'> hi_inner;
  // Clip(x, min, max), either bound omitted (an omitted one binds kNone): the inner Clip gives one bound
  // only, the outer one the other only.
  auto clips = named<'c'>(Clip(Clip(x, lo_inner, hi_inner), lo, hi));
  auto min_then_max = present(lo_inner) && !present(hi_inner) && !present(lo) && present(hi);
  auto max_then_min = present(hi_inner) && !present(lo_inner) && present(lo) && !present(hi) &&
                      is_scalar_constant(lo) && is_scalar_constant(hi_inner) &&
                      scalar_value(lo) <= scalar_value(hi_inner);
  return rule("ClipClip")
      .priority(1)
      .cases(match(clips).when(min_then_max).to(Clip(x, lo_inner, hi)),
             match(clips).when(max_then_min).to(Clip(x, lo, hi_inner)));
}

}  // namespace xexp::patterns
