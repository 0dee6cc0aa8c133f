#pragma once
// BatchNormalizationTraining: BatchNormalization in training mode normalizes with the batch's own
// statistics, mean and (biased) variance over every axis but the channels (axis 1):
//   Y = (X - mean) / sqrt(var + epsilon) * scale + bias, scale and bias reshaped to (1, C, 1, ...).
// Written out in standard ops, it runs where training mode does not (experimental-experiment added the
// rule when ONNX Runtime lacked it; 1.30's CPU provider has it, and both give the same numbers). The
// running statistics (outputs 1 and 2, which ONNX requires in training mode) must be unused, as
// matching requires of every root; scale and bias of X's type (opset 15 allows another).
// experimental-experiment also rewrites inference mode when momentum is 1, where ONNX normalizes with
// the given running statistics instead: not here.
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr batch_normalization_training_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'s'> scale;
  Var<'b'> bias;
  Var<'m'> mean;
  Var<'v'> var;
  Float<'e'> epsilon;
  auto bn =
      BatchNormalization(x, scale, bias, mean, var, attr<"epsilon"> = epsilon, attr<"training_mode"> = 1);
  auto axes = all_but_channels(x);
  auto centered = let<'d'>(Sub(x, ReduceMean(x, attr<"axes"> = axes, attr<"keepdims"> = 1)));
  auto variance = ReduceMean(Mul(centered, centered), attr<"axes"> = axes, attr<"keepdims"> = 1);
  auto deviation = Sqrt(Add(variance, fold(scalar_of_type(epsilon, x))));
  auto per_channel = [&](const auto& v) { return Reshape(v, fold(per_channel_shape(x))); };
  return rule("BatchNormalizationTraining")
      .match(bn)
      .when(rank(x) >= 2 && dtype(scale) == dtype(x) && dtype(bias) == dtype(x))
      .to(Add(Mul(Div(centered, deviation), per_channel(scale)), per_channel(bias)));
}

}  // namespace xexp::patterns
