#pragma once
// OrtBatchNormalizationTraining (onnxruntime_training set): BatchNormalization in training mode whose
// running statistics are read, for ONNX Runtime's CUDA provider, which has no training-mode kernel. The
// batch's statistics are written out and normalize in inference mode; the running statistics follow
// ONNX's update:
//   mean = ReduceMean(X, every axis but the channels), var = ReduceMean((X - mean)^2, same axes)
//   Y = BatchNormalization(X, scale, B, mean, var)                       (training_mode 0)
//   running_mean = input_mean * momentum + mean * (1 - momentum), running_var likewise from var.
// The default set's BatchNormalizationTraining takes the nodes whose running statistics are unused.
// Float and double only: ONNX computes a float16 input's statistics in float, which this would not.
#include "xexp/patterns/onnx/batch_normalization_training.hpp"

namespace xexp::patterns {

namespace normalization {
// bn names both running statistics among its outputs, and something reads one of them at least (a
// consumer or the graph's outputs).
inline constexpr auto running_statistics_read =
    rewrite::fact<"running_statistics_read">([](const ValueView& bn) {
      const ir::Node& n = rewrite::node_of(bn);
      auto present = [&](std::size_t k) { return k < n.outputs.size() && n.outputs[k] != ir::kNone; };
      return present(1) && present(2) &&
             (bn.graph->value(n.outputs[1]).is_read() || bn.graph->value(n.outputs[2]).is_read());
    });
}  // namespace normalization

inline rewrite::RulePtr ort_batch_normalization_training_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'s'> scale;
  Var<'b'> bias;
  Var<'i'> input_mean;
  Var<'I'> input_var;
  Float<'e'> epsilon;
  Float<'m'> momentum;
  auto bn = named<'n'>(
      shared(BatchNormalization(x, scale, bias, input_mean, input_var, attr<"epsilon"> = epsilon,
                                      attr<"momentum"> = momentum, attr<"training_mode"> = 1)));
  auto axes = all_but_channels(x);
  auto kept_mean = let<'k'>(ReduceMean(x, attr<"axes"> = axes, attr<"keepdims"> = 1));
  auto centered = let<'d'>(Sub(x, kept_mean));
  auto mean = let<'a'>(Reshape(kept_mean, fold(int64_tensor({-1}))));
  auto var = let<'w'>(ReduceMean(Mul(centered, centered), attr<"axes"> = axes, attr<"keepdims"> = 0));
  auto running = [&](const auto& input, const auto& batch) {
    return Add(Mul(input, fold(scalar_of_type(momentum, input))),
               Mul(batch, fold(scalar_of_type(1.0f - momentum, input))));
  };
  return rule("OrtBatchNormalizationTraining")
      .match(bn)
      .when(rank(x) >= 2 && (dtype(x) == ElemType::Float || dtype(x) == ElemType::Double) &&
            dtype(scale) == dtype(x) && dtype(bias) == dtype(x) && dtype(input_mean) == dtype(x) &&
            dtype(input_var) == dtype(x) && normalization::running_statistics_read(bn))
      .to(BatchNormalization(x, scale, bias, mean, var, attr<"epsilon"> = epsilon),
          also(output<1>(bn), running(input_mean, mean)), also(output<2>(bn), running(input_var, var)));
}

}  // namespace xexp::patterns
