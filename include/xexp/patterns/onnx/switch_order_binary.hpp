#pragma once
// SwitchOrderBinary: (a op b) op c, op Add or Mul, computes a full-size intermediate when a is large and
// b, c small (a bias then a scale constant, a mask then a second mask): a op (b op c) computes the small
// one instead. Reassociated when the new inner result has fewer elements (static shapes), which also
// makes each rewrite shrink it, so that rewrites stop. Floating point sums round differently by ulps.
#include <cstdint>
#include <optional>

#include "xexp/infer/broadcast.hpp"
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace elementwise {
// Elements of the broadcast of two static shapes, or nullopt.
inline std::optional<int64_t> broadcast_size(const ValueView& a, const ValueView& b) {
  if (!a.shape() || !b.shape() || !is_static(*a.shape()) || !is_static(*b.shape())) return std::nullopt;
  infer::ShapeConstraints constraints;
  try {
    return element_count(infer::broadcast_shapes(*a.shape(), *b.shape(), constraints));
  } catch (const Error&) {
    return std::nullopt;
  }
}
inline constexpr auto smaller_pair_first = rewrite::fact<"smaller_pair_first">(
    [](const ValueView& a, const ValueView& b, const ValueView& c) {
      const std::optional<int64_t> now = broadcast_size(a, b), then = broadcast_size(b, c);
      return now && then && *then < *now;
    });
}  // namespace elementwise

inline rewrite::RulePtr switch_order_binary_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Var<'c'> c;
  return rule("SwitchOrderBinary")
      .priority(1)
      .cases(match(commutative(Add(commutative(Add(a, b)), c)))
                 .when(elementwise::smaller_pair_first(a, b, c))
                 .to(Add(a, Add(b, c))),
             match(commutative(Mul(commutative(Mul(a, b)), c)))
                 .when(elementwise::smaller_pair_first(a, b, c))
                 .to(Mul(a, Mul(b, c))));
}

}  // namespace xexp::patterns
