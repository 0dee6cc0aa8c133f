#pragma once
// HardSwish: x * HardSigmoid(x, alpha=1/6, beta=0.5), or the Clip form exporters write below opset 14
// and keep after an upgrade, x * Clip(x + 3, 0, 6) / 6 (or * 1/6; Clip's bounds as inputs, or as
// attributes below opset 11), becomes HardSwish(x), which ONNX defines as x * max(0, min(1, x / 6 + 0.5)),
// from opset 14. Before it, the Clip form (paddle2onnx writes it at opsets 9 and 11) becomes
// x * HardSigmoid(x, 1/6, 0.5): standard ONNX there, half the nodes.
#include <utility>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace detail {
inline constexpr auto is_hard_swish_float = rewrite::fact<"is_hard_swish_float">([](const ValueView& x) {
  const ElemType t = x.elem();
  return t == ElemType::Float || t == ElemType::Double || t == ElemType::Float16;
});
// 1/6 as a float32 attribute (0.16666667) or rounded to float16 (0.1666259765625).
inline constexpr auto is_one_sixth =
    rewrite::fact<"is_one_sixth">([](float alpha) { return std::abs(alpha - 1.0 / 6.0) <= 1e-4; });
inline constexpr auto is_one_sixth_constant =
    rewrite::fact<"is_one_sixth_constant">([](const ValueView& v) { return scalar_near(v, 1.0 / 6.0, 1e-4); });
}  // namespace detail

inline rewrite::RulePtr hard_swish_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Float<'a'> alpha;
  Var<'t'> three;
  Var<'z'> zero;
  Var<'s'> six;
  Var<'d'> divisor;
  auto sum = commutative(Add(x, three));
  auto fits = opset_at_least(6) && detail::is_hard_swish_float(x) && scalar_is(three, 3.0);
  auto clip_by_inputs = commutative(Mul(x, op<"Clip">(sum, zero, six)));
  auto inputs_fit = fits && scalar_is(zero, 0.0) && scalar_is(six, 6.0);
  auto clip_by_attributes = commutative(Mul(x, op<"Clip">(sum, attr<"min"> = 0.0f, attr<"max"> = 6.0f)));
  // Below opset 14 ONNX has no HardSwish: x * HardSigmoid(x, 1/6, 0.5), two nodes of the four.
  auto hard_swish = choose(opset_at_least(14), op<"HardSwish">(x),
                           Mul(x, op<"HardSigmoid">(x, attr<"alpha"> = 1.0f / 6.0f, attr<"beta"> = 0.5f)));
  auto divided_by_six = [&](auto clipped, auto clip_fits) {  // (x * clip) / 6 or (x * clip) * (1/6)
    return std::pair{match(Div(clipped, divisor)).when(clip_fits && scalar_is(divisor, 6.0)).to(hard_swish),
                     match(commutative(Mul(clipped, divisor)))
                         .when(clip_fits && detail::is_one_sixth_constant(divisor))
                         .to(hard_swish)};
  };
  auto [inputs_divided, inputs_multiplied] = divided_by_six(clip_by_inputs, inputs_fit);
  auto [attributes_divided, attributes_multiplied] = divided_by_six(clip_by_attributes, fits);
  return rule("HardSwish")
      .priority(1)
      .cases(match(commutative(Mul(x, op<"HardSigmoid">(x, attr<"alpha"> = alpha, attr<"beta"> = 0.5f))))
                 .when(opset_at_least(14) && detail::is_hard_swish_float(x) && detail::is_one_sixth(alpha))
                 .to(op<"HardSwish">(x)),
             inputs_divided, inputs_multiplied, attributes_divided, attributes_multiplied);
}

}  // namespace xexp::patterns
