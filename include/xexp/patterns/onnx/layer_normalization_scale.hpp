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
  auto fits = same_dims_and_type(c, scale) && constant_or_absent(bias);
  auto scaled = fold(product(scale, c));
  return rule("LayerNormalizationScale")
      .priority(1)
      .cases(match(commutative(Mul(ln, c)))
                 .when(fits)
                 .to(rebuild(ln, input<1> = scaled,
                             input<2> = choose(present(bias), fold(product(bias, c)), bias))),
             match(commutative(Add(ln, c)))
                 .when(fits)
                 .to(rebuild(ln, input<2> = choose(present(bias), fold(sum(bias, c)), c))),
             match(commutative(Mul(ln, w)))
                 .when(all_equal(scale, 1.0) && absent_or_zero(bias) && shaped_like(w, scale))
                 .to(rebuild(ln, input<1> = w)),
             match(commutative(Add(biasless, w)))
                 .when(absent_or_zero(bias) && shaped_like(w, any_scale))
                 .to(rebuild(biasless, input<2> = w)));
}

}  // namespace xexp::patterns
