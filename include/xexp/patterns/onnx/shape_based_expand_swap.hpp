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
inline constexpr auto broadcast_is_smaller =
    rewrite::fact<"broadcast_is_smaller">([](const ValueView& a, const ValueView& b, const ValueView& out) {
      if (!a.shape() || !b.shape() || !out.shape()) return false;
      for (std::size_t k = 0; k < out.shape()->size(); ++k)
        if (!gives_axis(*out.shape(), k, {&*a.shape(), &*b.shape()})) return true;
      return false;
    });
}  // namespace detail

inline rewrite::RulePtr shape_based_expand_swap_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'y'> y;
  Var<'s'> s;
  auto left = named<'o'>(op<kBroadcastBinary>(Expand(x, s), y));
  auto right = named<'o'>(op<kBroadcastBinary>(y, Expand(x, s)));
  return rule("ShapeBasedExpandSwap")
      .priority(1)
      .cases(
          match(left).when(detail::broadcast_is_smaller(x, y, left)).to(Expand(rebuild(left, x, y), s)),
          match(right).when(detail::broadcast_is_smaller(x, y, right)).to(Expand(rebuild(right, y, x), s)));
}

}  // namespace xexp::patterns
