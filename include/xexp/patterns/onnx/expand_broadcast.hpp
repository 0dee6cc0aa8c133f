#pragma once
// ExpandBroadcast: Binary(Expand(X, s), Y) is Binary(X, Y) when broadcasting X against Y already gives
// the output shape: the Expand materializes a tensor the op would broadcast anyway. Checked on shapes,
// dimension by dimension (same rank): each operand's dimension is 1 or the output's, and one of them is
// the output's. Binary: the element-wise arithmetic, logic and comparison ops; the Expand may feed
// either side; its shape s is a constant and its output is used once.
#include "xexp/patterns/facts.hpp"
#include "xexp/patterns/op_families.hpp"

namespace xexp::patterns {

namespace detail {
// Broadcasting a against b gives `out` (shapes known, same rank).
inline constexpr auto broadcasts_to =
    rewrite::fact<"broadcasts_to">([](const ValueView& a, const ValueView& b, const ValueView& out) {
      if (!a.shape() || !b.shape() || !out.shape()) return false;
      const Shape &sa = *a.shape(), &sb = *b.shape(), &so = *out.shape();
      if (sa.size() != so.size() || sb.size() != so.size()) return false;
      using rewrite::facts::KnownDim;
      for (std::size_t k = 0; k < so.size(); ++k) {
        const bool a_full = KnownDim{sa[k]} == KnownDim{so[k]}, b_full = KnownDim{sb[k]} == KnownDim{so[k]};
        const bool a_one = KnownDim{sa[k]} == 1, b_one = KnownDim{sb[k]} == 1;
        if (!(a_full || a_one) || !(b_full || b_one) || !(a_full || b_full)) return false;
      }
      return true;
    });
}  // namespace detail

inline rewrite::RulePtr expand_broadcast_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'y'> y;
  Const<'s'> s;
  auto left = named<'o'>(op<kBroadcastBinary>(Expand(x, s), y));
  auto right = named<'o'>(op<kBroadcastBinary>(y, Expand(x, s)));
  return rule("ExpandBroadcast")
      .priority(1)
      .cases(match(left).when(detail::broadcasts_to(x, y, left)).to(rebuild(left, x, y)),
             match(right).when(detail::broadcasts_to(x, y, right)).to(rebuild(right, y, x)));
}

}  // namespace xexp::patterns
