#pragma once
// SkipLayerNormalization (onnxruntime set): LayerNormalization(a + b, gamma, beta) over the last axis
// becomes com.microsoft SkipLayerNormalization(a, b, gamma, beta), whose 4th output (the sum) takes
// over the Add's other consumers (the residual branch of a transformer block). A missing `axis` is the
// ONNX default -1, and epsilon is always written (SkipLayerNormalization's own default is 1e-12,
// LayerNormalization's 1e-5: dropping a default epsilon would change the result). a and b must have the same
// known shape, of rank 2 or 3; gamma and beta are vectors over the last axis; statistics in float.
// One node fewer, not less time everywhere: ONNX Runtime 1.30's CPU kernel is slower than the Add and
// the LayerNormalization it replaces (bench/README.md).
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr skip_layer_normalization_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Var<'g'> gamma;
  Opt<'B'> beta;
  Int<'A'> axis;
  Float<'e'> epsilon;
  auto sum = named<'s'>(shared(Add(a, b)));
  auto skip = [&](const auto&... bias) {
    return outputs<4>(
        op<"SkipLayerNormalization", "com.microsoft">(a, b, gamma, bias..., attr<"epsilon"> = epsilon));
  };
  auto fused = let<'f'>(choose(present(beta), skip(beta), skip()));
  return rule("SkipLayerNormalization")
      .priority(1)
      .match(LayerNormalization(sum, gamma, beta, attr<"axis"> = axis, attr<"epsilon"> = epsilon,
                                attr<"stash_type"> = 1))
      .when(same_shape(a, b) && is_rank_2_or_3(a) && is_last_axis(axis, a) && is_normalization_float(a) &&
            present(gamma) && absent_or_vector_over_last_axis(gamma, a) &&
            absent_or_vector_over_last_axis(beta, a))
      .to(fused, also(sum, output<3>(fused)));
}

}  // namespace xexp::patterns
