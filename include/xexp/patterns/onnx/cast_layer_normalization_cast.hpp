#pragma once
// CastLayerNormalizationCast: half-precision models normalize in float: Cast(X, float) ->
// LayerNormalization -> Cast back to X's type. LayerNormalization computes its statistics in stash_type
// (float) whatever its input type, so it can take X directly, with its scale and bias cast to X's type
// (constants, folded), and the two Casts of the activations go. Also ONNX Runtime's
// SimplifiedLayerNormalization (default domain, same inputs and stash_type). float16 and double only:
// ONNX Runtime 1.30's CPU kernels have no bfloat16 for either.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace cast {
inline constexpr rewrite::FixedString kStashedNormalizations = "LayerNormalization|SimplifiedLayerNormalization";
}  // namespace cast

inline rewrite::RulePtr cast_layer_normalization_cast_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'s'> scale;
  Var<'b'> bias;
  Int<'S'> stash;
  Int<'B'> back;
  auto with_bias = named<'n'>(op<cast::kStashedNormalizations>(Cast(x, attr<"to"> = stash), scale, bias, attr<"stash_type"> = stash));
  auto without_bias = named<'n'>(op<cast::kStashedNormalizations>(Cast(x, attr<"to"> = stash), scale, attr<"stash_type"> = stash));
  auto condition =
      (dtype(x) == ElemType::Float16 || dtype(x) == ElemType::Double) && dtype(x) == back && stash == int64_t{1};
  auto cast_scale = Cast(scale, attr<"to"> = dtype(x));
  return rule("CastLayerNormalizationCast")
      .priority(1)
      .cases(match(Cast(with_bias, attr<"to"> = back))
                 .when(condition)
                 .to(rebuild(with_bias, x, cast_scale, Cast(bias, attr<"to"> = dtype(x)))),
             match(Cast(without_bias, attr<"to"> = back)).when(condition).to(rebuild(without_bias, x, cast_scale)));
}

}  // namespace xexp::patterns
