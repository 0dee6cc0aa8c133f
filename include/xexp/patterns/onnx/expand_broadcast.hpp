#pragma once
// ExpandBroadcast: Binary(Expand(X, s), Y) is Binary(X, Y) when broadcasting X against Y already gives
// the output shape: the Expand materializes a tensor the op would broadcast anyway. Checked on shapes,
// dimension by dimension (see detail::is_broadcast_of). Binary: the element-wise arithmetic, logic and
// comparison ops; the Expand may feed either side; its shape s is a constant and its output is used once.
// A ConstantOfShape operand likewise becomes its value, a scalar, when the other operand alone has the
// output's shape (torch's backward graphs write ones_like(x) - y); it may feed several such ops.
#include "xexp/patterns/facts.hpp"
#include "xexp/patterns/op_families.hpp"

namespace xexp::patterns {

namespace detail {
// Broadcasting aligns ranks on the right: the dimension of s facing axis k of a rank-`out_rank` result,
// nullptr where s lacks that axis (it counts as 1).
inline const Dim* aligned_dim(const Shape& s, std::size_t k, std::size_t out_rank) {
  return k + s.size() < out_rank ? nullptr : &s[k + s.size() - out_rank];
}
// Axis k of `out` comes out of broadcasting the operands: one of them has that dimension (known, the
// same size or symbol), or it is 1.
inline bool gives_axis(const Shape& out, std::size_t k, std::initializer_list<const Shape*> operands) {
  using rewrite::facts::KnownDim;
  for (const Shape* s : operands)
    if (const Dim* d = aligned_dim(*s, k, out.size()); d && KnownDim{*d} == KnownDim{out[k]}) return true;
  return KnownDim{out[k]} == 1;
}
// Broadcasting the operands gives exactly `out`'s shape: each operand's dimension is 1 or out's, and
// each axis of out comes from one of them. Shapes known; symbolic dimensions compare by name.
inline bool broadcast_gives(const Shape& out, std::initializer_list<const Shape*> operands) {
  using rewrite::facts::KnownDim;
  for (const Shape* s : operands)
    if (s->size() > out.size()) return false;
  for (std::size_t k = 0; k < out.size(); ++k) {
    for (const Shape* s : operands)
      if (const Dim* d = aligned_dim(*s, k, out.size());
          d && !(KnownDim{*d} == KnownDim{out[k]} || KnownDim{*d} == 1))
        return false;
    if (!gives_axis(out, k, operands)) return false;
  }
  return true;
}
// `out` is what broadcasting the operands gives (Binary(x, y) or Where(c, x, y) without their Expands).
inline constexpr auto is_broadcast_of =
    rewrite::fact<"is_broadcast_of">([](const ValueView& out, const auto&... operands) {
      if (!out.shape() || !(operands.shape() && ...)) return false;
      return broadcast_gives(*out.shape(), {&*operands.shape()...});
    });
// The one value of a ConstantOfShape, as a scalar of its type: float 0 when the node gives none.
inline const Tensor* fill_value(const ValueView& fill) {
  const ir::Attribute* a = rewrite::node_of(fill).attribute(Symbol("value"));
  return a && a->tensors.size() == 1 ? &a->tensors[0] : nullptr;
}
inline constexpr auto fills_one_value = rewrite::fact<"fills_one_value">([](const ValueView& fill) {
  const Tensor* value = fill_value(fill);
  return !value || value->size() == 1;
});
inline constexpr auto fill_scalar = rewrite::fact<"fill_scalar">([](const ValueView& fill) {
  const Tensor* value = fill_value(fill);
  return value ? value->reshaped({}) : Tensor::scalar<float>(0.f);
});
}  // namespace detail

inline rewrite::RulePtr expand_broadcast_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'y'> y;
  Const<'s'> s;
  Var<'z'> z;
  auto left = named<'o'>(op<kBroadcastBinary>(Expand(x, s), y));
  auto right = named<'o'>(op<kBroadcastBinary>(y, Expand(x, s)));
  auto fill = named<'f'>(shared(ConstantOfShape(z)));
  auto fill_left = named<'o'>(op<kBroadcastBinary>(fill, y));
  auto fill_right = named<'o'>(op<kBroadcastBinary>(y, fill));
  auto scalar_fill = fold(detail::fill_scalar(fill));
  return rule("ExpandBroadcast")
      .priority(1)
      .cases(match(left).when(detail::is_broadcast_of(left, x, y)).to(rebuild(left, x, y)),
             match(right).when(detail::is_broadcast_of(right, x, y)).to(rebuild(right, y, x)),
             match(fill_left)
                 .when(detail::fills_one_value(fill) && detail::is_broadcast_of(fill_left, y))
                 .to(rebuild(fill_left, scalar_fill, y)),
             match(fill_right)
                 .when(detail::fills_one_value(fill) && detail::is_broadcast_of(fill_right, y))
                 .to(rebuild(fill_right, y, scalar_fill)));
}

}  // namespace xexp::patterns
