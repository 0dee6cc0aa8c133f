#pragma once
// ExpandBroadcast: Binary(Expand(X, s), Y) is Binary(X, Y) when broadcasting X against Y already gives
// the output shape: the Expand materializes a tensor the op would broadcast anyway. Checked on shapes,
// dimension by dimension (see detail::is_broadcast_of). Binary: the element-wise arithmetic, logic and
// comparison ops; the Expand may feed either side; its shape s is a constant and its output is used once.
#include "xexp/patterns/facts.hpp"
#include "xexp/patterns/op_families.hpp"

namespace xexp::patterns {

namespace detail {
// Broadcasting the operands (numpy rules: aligned on the right, a missing leading axis counts as 1)
// gives exactly `out`'s shape: each operand's dimension is 1 or out's, and one of them is out's. Shapes
// known; symbolic dimensions compare by name.
inline bool broadcast_gives(const Shape& out, std::initializer_list<const Shape*> operands) {
  using rewrite::facts::KnownDim;
  for (const Shape* s : operands)
    if (s->size() > out.size()) return false;
  for (std::size_t k = 0; k < out.size(); ++k) {
    bool some_full = false;
    for (const Shape* s : operands) {
      if (k + s->size() < out.size()) continue;  // a leading axis the operand lacks: 1
      const Dim& d = (*s)[k + s->size() - out.size()];
      const bool full = KnownDim{d} == KnownDim{out[k]};
      if (!full && !(KnownDim{d} == 1)) return false;
      some_full = some_full || full;
    }
    if (!some_full && !(KnownDim{out[k]} == 1)) return false;
  }
  return true;
}
// `out` is what broadcasting the operands gives (Binary(x, y) or Where(c, x, y) without their Expands).
inline constexpr auto is_broadcast_of =
    rewrite::fact<"is_broadcast_of">([](const ValueView& out, const auto&... operands) {
      if (!out.shape() || !(operands.shape() && ...)) return false;
      return broadcast_gives(*out.shape(), {&*operands.shape()...});
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
      .cases(match(left).when(detail::is_broadcast_of(left, x, y)).to(rebuild(left, x, y)),
             match(right).when(detail::is_broadcast_of(right, x, y)).to(rebuild(right, y, x)));
}

}  // namespace xexp::patterns
