#pragma once
// LayerNormalizationScale: a constant Mul (or Add) after a LayerNormalization goes into its scale (and
// bias): LN(x, s, b) * m = LN(x, s*m, b*m) and LN(x, s, b) + c = LN(x, s, b+c), when m and c have the
// scale's shape. Applied one after the other, LN -> Mul -> Add becomes one LN.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace detail {
inline constexpr auto constant_or_absent =
    rewrite::fact<"constant_or_absent">([](const ValueView& v) { return v.id == ir::kNone || v.constant(); });
// bias (a constant) op c.
inline constexpr auto bias_times = rewrite::fact<"bias_times">([](const ValueView& bias, const Tensor& c) {
  return compute("Mul", {*bias.constant(), c});
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
  Const<'m'> c;
  auto ln = named<'n'>(LayerNormalization(x, scale, bias));
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
                 .to(rebuild(ln, input<2> = choose(present(bias), fold(detail::bias_plus(bias, c)), c))));
}

}  // namespace xexp::patterns
