#pragma once
// ExpandBroadcast: Binary(Expand(X, s), Y) is Binary(X, Y) when broadcasting X against Y already gives
// the output shape: the Expand materializes a tensor the op would broadcast anyway. Checked on shapes,
// dimension by dimension (same rank): each operand's dimension is 1 or the output's, and one of them is
// the output's. Binary: the element-wise arithmetic, logic and comparison ops; the Expand may feed
// either side; its shape s is a constant and its output is used once.
#include "xexp/patterns/root_family.hpp"
#include "xexp/patterns/variadic_node.hpp"

namespace xexp::patterns {

namespace detail {
using BroadcastOps = OpList<"Add", "Sub", "Mul", "Div", "Pow", "Mod", "And", "Or", "Xor", "Equal", "Greater",
                            "GreaterOrEqual", "Less", "LessOrEqual">;
// Broadcasting a against b gives `out` (shapes known, same rank).
inline bool broadcasts_to(const rewrite::ValueView& a, const rewrite::ValueView& b, const rewrite::ValueView& out) {
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
}
// The binary node again on new operands.
inline std::optional<ir::ValueId> binary_on(rewrite::Rewriter& r, const rewrite::ValueView& binary, ir::ValueId a,
                                            ir::ValueId b) {
  const ir::Node& n = node_of(binary);
  return r.node(n.op_type, {a, b}, n.attributes, n.domain);
}
}  // namespace detail

inline rewrite::RulePtr expand_broadcast_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'y'> y;
  Const<'s'> s;
  auto rebuilt = [](Rewriter& r, const ValueView& binary, const ValueView& a, const ValueView& b) {
    return detail::binary_on(r, binary, a.id, b.id);
  };
  auto fits = [&](auto binary) { return call("broadcasts_to", detail::broadcasts_to, x, y, binary); };
  return for_each_root(
      detail::BroadcastOps{}, rule("ExpandBroadcast").priority(1),
      [&]<rewrite::FixedString Op>() {
        auto binary = variadic<'o', Op>(Expand(x, s), y);
        return match(binary).when(fits(binary)).to(replace_with("binary_on", rebuilt, binary, x, y));
      },
      [&]<rewrite::FixedString Op>() {
        auto binary = variadic<'o', Op>(y, Expand(x, s));
        return match(binary).when(fits(binary)).to(replace_with("binary_on", rebuilt, binary, y, x));
      });
}

}  // namespace xexp::patterns
