#pragma once
// LayerNormalizationScale: a constant Mul (or Add) after a LayerNormalization goes into its scale (and
// bias): LN(x, s, b) * m = LN(x, s*m, b*m) and LN(x, s, b) + c = LN(x, s, b+c), when m and c have the
// scale's shape. Applied one after the other, LN -> Mul -> Add becomes one LN.
// A w that is not a constant (a training export's parameter, a weight whose data is not shipped) goes in
// too when the LN's bias is absent or zeros, and for the Mul its scale is ones, as LayerNormalization
// leaves a hand-written normalization: LN(x, 1, 0) * w = LN(x, w, 0) and LN(x, s, 0) + w = LN(x, s, w).
#include <type_traits>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace detail {
inline constexpr auto constant_or_absent =
    rewrite::fact<"constant_or_absent">([](const ValueView& v) { return v.id == ir::kNone || v.constant(); });
// bias (a constant) op c.
inline constexpr auto bias_times = rewrite::fact<"bias_times">([](const ValueView& bias, const Tensor& c) {
  return compute("Mul", {*bias.constant(), c});
});
inline constexpr auto absent_or_zero = rewrite::fact<"absent_or_zero">([](const ValueView& v) {
  return v.id == ir::kNone || (v.constant() && equal_everywhere(*v.constant(), 0.0));
});
// A value of the static dims and element type of `like` (a value or a constant's tensor), whatever its
// content.
inline constexpr auto shaped_like = rewrite::fact<"shaped_like">([](const ValueView& v, const auto& like) {
  const auto dims = static_dims_of(v);
  if constexpr (std::is_same_v<std::decay_t<decltype(like)>, Tensor>)
    return dims && *dims == like.dims() && v.elem() == like.type();
  else
    return dims && dims == static_dims_of(like) && v.elem() == like.elem();
});
inline constexpr auto bias_plus = rewrite::fact<"bias_plus">([](const ValueView& bias, const Tensor& c) {
  return compute("Add", {*bias.constant(), c});
});
}  // namespace detail

inline rewrite::RulePtr layer_normalization_scale_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Const<'s'> scale;
  Opt<'b'> bias;
  Const<'c'> c;
  Var<'w'> w;
  Var<'a'> any_scale;
  auto ln = named<'n'>(LayerNormalization(x, scale, bias));
  auto biasless = named<'n'>(LayerNormalization(x, any_scale, bias));  // its scale may be anything
  auto fits = same_dims_and_type(c, scale) && detail::constant_or_absent(bias);
  auto scaled = fold(product(scale, c));
  return rule("LayerNormalizationScale")
      .priority(1)
      .cases(match(commutative(Mul(ln, c)))
                 .when(fits)
                 .to(rebuild(ln, input<1> = scaled,
                             input<2> = choose(present(bias), fold(detail::bias_times(bias, c)), bias))),
             match(commutative(Add(ln, c)))
                 .when(fits)
                 .to(rebuild(ln, input<2> = choose(present(bias), fold(detail::bias_plus(bias, c)), c))),
             match(commutative(Mul(ln, w)))
                 .when(all_equal(scale, 1.0) && detail::absent_or_zero(bias) && detail::shaped_like(w, scale))
                 .to(rebuild(ln, input<1> = w)),
             match(commutative(Add(biasless, w)))
                 .when(detail::absent_or_zero(bias) && detail::shaped_like(w, any_scale))
                 .to(rebuild(biasless, input<2> = w)));
}

}  // namespace xexp::patterns
