#pragma once
// ClipClip: a Clip with only a min followed by a Clip with only a max (or the reverse) is one Clip.
// Clip(x, lo, hi) computes min(max(x, lo), hi), which is min-then-max for any bounds; max-then-min,
// max(min(x, hi), lo), differs when lo > hi, so that order needs both bounds constant with lo <= hi
// (the original did not check it). Opset >= 11 (bounds as inputs).
#include "xexp/patterns/constant_facts.hpp"
#include "xexp/patterns/variadic_node.hpp"

namespace xexp::patterns {

namespace detail {
struct ClipBounds {
  ir::ValueId lo, hi;
};
inline ClipBounds clip_bounds(const rewrite::ValueView& clip) { return {input_of(clip, 1), input_of(clip, 2)}; }
inline bool clips_merge(const rewrite::ValueView& outer, const rewrite::ValueView& inner) {
  const ClipBounds o = clip_bounds(outer), i = clip_bounds(inner);
  const bool inner_min_only = i.lo != ir::kNone && i.hi == ir::kNone;
  const bool inner_max_only = i.lo == ir::kNone && i.hi != ir::kNone;
  const bool outer_min_only = o.lo != ir::kNone && o.hi == ir::kNone;
  const bool outer_max_only = o.lo == ir::kNone && o.hi != ir::kNone;
  if (inner_min_only && outer_max_only) return true;
  if (!(inner_max_only && outer_min_only)) return false;
  std::optional<double> lo = scalar_constant(*outer.graph, o.lo), hi = scalar_constant(*outer.graph, i.hi);
  return lo && hi && *lo <= *hi;
}
}  // namespace detail

inline rewrite::RulePtr clip_clip_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  // variadic: min and max are optional inputs, op<...> cannot match an omitted one in the middle.
  auto inner = variadic<'i', "Clip">(x);
  auto outer = variadic<'o', "Clip">(inner);
  auto merged = [](Rewriter& r, const ValueView& input, const ValueView& o, const ValueView& i) -> std::optional<ir::ValueId> {
    const detail::ClipBounds a = detail::clip_bounds(o), b = detail::clip_bounds(i);
    return r.node(Symbol("Clip"), {input.id, a.lo != ir::kNone ? a.lo : b.lo, a.hi != ir::kNone ? a.hi : b.hi});
  };
  return rule("ClipClip")
      .priority(1)
      .match(outer)
      .when(call("clips_merge", detail::clips_merge, outer, inner))
      .to(replace_with("Clip", merged, x, outer, inner));
}

}  // namespace xexp::patterns
