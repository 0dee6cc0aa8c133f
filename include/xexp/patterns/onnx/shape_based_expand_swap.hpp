#pragma once
// ShapeBasedExpandSwap: Binary(Expand(X, s), Y) is Expand(Binary(X, Y), s) (broadcasting is
// associative, and an Expand only fills dimensions of size 1, so X and Y broadcast together). Worth it
// when X and Y broadcast to less than the output, the op then runs on fewer elements; when they give
// the whole output, (ShapeBased)ExpandBroadcast drops the Expand instead. Shapes of X and Y known; the
// Expand feeds either side and is used once.
#include "xexp/patterns/onnx/expand_broadcast.hpp"

namespace xexp::patterns {

namespace detail {
// Broadcasting a against b gives fewer elements than `out`: a dimension of out neither operand has.
inline bool broadcast_is_smaller(const rewrite::ValueView& a, const rewrite::ValueView& b,
                                 const rewrite::ValueView& out) {
  if (!a.shape() || !b.shape() || !out.shape()) return false;
  const Shape &sa = *a.shape(), &sb = *b.shape(), &so = *out.shape();
  using rewrite::facts::KnownDim;
  for (std::size_t k = 0; k < so.size(); ++k) {
    const std::size_t from_end = so.size() - k;
    const bool in_a = from_end <= sa.size() && KnownDim{sa[sa.size() - from_end]} == KnownDim{so[k]};
    const bool in_b = from_end <= sb.size() && KnownDim{sb[sb.size() - from_end]} == KnownDim{so[k]};
    if (!in_a && !in_b && !(KnownDim{so[k]} == 1)) return true;
  }
  return false;
}
}  // namespace detail

inline rewrite::RulePtr shape_based_expand_swap_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'y'> y;
  Var<'s'> s;
  auto expanded = [](Rewriter& r, const ValueView& binary, const ValueView& a, const ValueView& b,
                     const ValueView& shape) -> std::optional<ir::ValueId> {
    const ir::ValueId computed = *detail::binary_on(r, binary, a.id, b.id);
    return r.node(Symbol("Expand"), {computed, shape.id});
  };
  auto fits = [&](auto binary) { return call("broadcast_is_smaller", detail::broadcast_is_smaller, x, y, binary); };
  return for_each_root(
      detail::BroadcastOps{}, rule("ShapeBasedExpandSwap").priority(1),
      [&]<rewrite::FixedString Op>() {
        auto binary = variadic<'o', Op>(Expand(x, s), y);
        return match(binary).when(fits(binary)).to(replace_with("expand_after", expanded, binary, x, y, s));
      },
      [&]<rewrite::FixedString Op>() {
        auto binary = variadic<'o', Op>(y, Expand(x, s));
        return match(binary).when(fits(binary)).to(replace_with("expand_after", expanded, binary, y, x, s));
      });
}

}  // namespace xexp::patterns
