#pragma once
// SkipLayerNormalizationBias (onnxruntime set): the Add of a bias vector to either operand of a
// SkipLayerNormalization or SkipSimplifiedLayerNormalization goes into the node's bias input:
// Skip(y + c, s) = Skip(y, s, bias=c), for the normalized output and for the sum (output 3) alike.
// That bias is a Linear layer's, just before the residual connection (BERT, ViT): its MatMul then stays
// one node, where MatMulAdd would make it Reshape, Gemm, Reshape. y must have the Add's shape (the vector
// only broadcasts), and nothing else may read the Add.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr skip_layer_normalization_bias_rule() {
  using namespace rewrite::dsl;
  Var<'y'> y;
  Var<'B'> bias;
  Var<'o'> other;
  Var<'g'> gamma;
  Opt<'b'> beta;
  auto biased = commutative(Add(y, bias));
  auto layer = [&](const auto& first, const auto& second) {
    return named<'n'>(shared(op<"SkipLayerNormalization", "com.microsoft">(first, second, gamma, beta)));
  };
  auto simplified = [&](const auto& first, const auto& second) {
    return named<'n'>(shared(op<"SkipSimplifiedLayerNormalization", "com.microsoft">(first, second, gamma)));
  };
  auto layer_first = layer(biased, other);
  auto layer_second = layer(other, biased);
  auto simplified_first = simplified(biased, other);
  auto simplified_second = simplified(other, biased);
  auto fits = absent_or_vector_over_last_axis(bias, y) && same_shape(y, other);
  return rule("SkipLayerNormalizationBias")
      .priority(1)
      .cases(
          match(layer_first).when(fits).to(rebuild(layer_first, input<0> = y, input<4> = bias)),
          match(layer_second).when(fits).to(rebuild(layer_second, input<1> = y, input<4> = bias)),
          match(simplified_first).when(fits).to(rebuild(simplified_first, input<0> = y, input<3> = bias)),
          match(simplified_second).when(fits).to(rebuild(simplified_second, input<1> = y, input<3> = bias)));
}

}  // namespace xexp::patterns
