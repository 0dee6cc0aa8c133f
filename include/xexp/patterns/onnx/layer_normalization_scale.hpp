#pragma once
// LayerNormalizationScale: a constant Mul (or Add) after a LayerNormalization goes into its scale (and
// bias): LN(x, s, b) * m = LN(x, s*m, b*m) and LN(x, s, b) + c = LN(x, s, b+c), when m and c have the
// scale's shape. Applied one after the other, LN -> Mul -> Add becomes one LN.
#include "xexp/patterns/constant_math.hpp"
#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

namespace detail {
inline bool same_dims(const Tensor& a, const Tensor& b) { return a.dims() == b.dims() && a.type() == b.type(); }
inline bool constant_or_absent(const rewrite::ValueView& v) { return v.id == ir::kNone || v.constant(); }
inline Tensor times(const Tensor& a, const Tensor& b) { return compute("Mul", {a, b}); }
inline Tensor bias_times(const rewrite::ValueView& bias, const Tensor& m) { return times(*bias.constant(), m); }
inline Tensor bias_plus(const rewrite::ValueView& bias, const Tensor& c) {
  return compute("Add", {*bias.constant(), c});
}
}  // namespace detail

inline rewrite::RulePtr layer_normalization_scale_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Const<'s'> scale;
  Opt<'b'> bias;
  Const<'m'> c;
  Int<'a'> axis;
  Float<'e'> epsilon;
  Int<'t'> stash;
  auto ln = LayerNormalization(x, scale, bias, attr<"axis"> = axis, attr<"epsilon"> = epsilon,
                               attr<"stash_type"> = stash);
  auto with = [&](const auto& new_scale, const auto& new_bias) {
    return LayerNormalization(x, new_scale, new_bias, attr<"axis"> = axis, attr<"epsilon"> = epsilon,
                              attr<"stash_type"> = stash);
  };
  auto fits = call("same_dims", detail::same_dims, c, scale) &&
              call("constant_or_absent", detail::constant_or_absent, bias);
  auto scaled = fold(call("times", detail::times, scale, c));
  return rule("LayerNormalizationScale")
      .priority(1)
      .cases(match(commutative(Mul(ln, c)))
                 .when(fits)
                 .to(choose(present(bias), with(scaled, fold(call("bias_times", detail::bias_times, bias, c))),
                            with(scaled, bias))),
             match(commutative(Add(ln, c)))
                 .when(fits)
                 .to(choose(present(bias), with(scale, fold(call("bias_plus", detail::bias_plus, bias, c))),
                            with(scale, c))));
}

}  // namespace xexp::patterns
