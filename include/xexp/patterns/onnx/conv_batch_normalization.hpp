#pragma once
// ConvBatchNormalization: a BatchNormalization in inference mode after a Conv with constant weights goes
// into the Conv's weights and bias, as exporters of convolutional networks (paddle2onnx, torch in eval
// mode without folding) leave it:
//   BN(Conv(x, W, B)) = Conv(x, W * f, (B - mean) * f + bias),  f = scale / sqrt(var + epsilon)
// with f broadcast over the output channels (W's first axis). The folded tensors are computed with the
// evaluator's kernels in the weights' type, as the model would compute them.
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace detail {
// BatchNormalization's factor per channel: scale / sqrt(var + epsilon).
inline Tensor batch_norm_factor(const Tensor& scale, const Tensor& var, float epsilon) {
  const Tensor eps = eval::filled(var.type(), {}, epsilon);
  return compute("Div", {scale, compute("Sqrt", {compute("Add", {var, eps})})});
}
// Inference mode (training_mode absent or 0), per-channel statistics of the weights' float type, as many
// as W has output channels, and a bias absent or constant of that shape.
inline constexpr auto batch_norm_folds_into =
    rewrite::fact<"batch_norm_folds_into">([](const ValueView& bn, const Tensor& w, const ValueView& b,
                                              const Tensor& scale, const Tensor& bias, const Tensor& mean,
                                              const Tensor& var) {
      if (const ir::Attribute* t = rewrite::node_of(bn).attribute(Symbol("training_mode")); t && t->i != 0)
        return false;
      if (!is_normalization_type(w.type()) || w.dims().size() < 2) return false;
      const std::vector<int64_t> channels{w.dims()[0]};
      for (const Tensor* t : {&scale, &bias, &mean, &var})
        if (t->type() != w.type() || t->dims() != channels) return false;
      if (b.id == ir::kNone) return true;
      const Tensor* c = b.constant();
      return c && c->type() == w.type() && c->dims() == channels;
    });
// W * f, f reshaped to (channels, 1, ..., 1).
inline constexpr auto batch_norm_weight = rewrite::fact<"batch_norm_weight">(
    [](const Tensor& w, const Tensor& scale, const Tensor& var, float epsilon) {
      std::vector<int64_t> dims(w.dims().size(), 1);
      dims[0] = -1;
      return compute("Mul", {w, compute("Reshape", {batch_norm_factor(scale, var, epsilon), int64_tensor(dims)})});
    });
// (B - mean) * f + bias, B being 0 when the Conv has no bias.
inline constexpr auto batch_norm_bias =
    rewrite::fact<"batch_norm_bias">([](const ValueView& b, const Tensor& scale, const Tensor& bias,
                                        const Tensor& mean, const Tensor& var, float epsilon) {
      const Tensor centered = b.id == ir::kNone ? compute("Neg", {mean}) : compute("Sub", {*b.constant(), mean});
      return compute("Add", {compute("Mul", {centered, batch_norm_factor(scale, var, epsilon)}), bias});
    });
}  // namespace detail

inline rewrite::RulePtr conv_batch_normalization_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Const<'w'> w;
  Opt<'b'> b;
  Const<'s'> scale;
  Const<'o'> offset;
  Const<'m'> mean;
  Const<'v'> var;
  Float<'e'> epsilon;
  // rebuild: the Conv keeps its attributes (pads, strides, group, ...), only its weights change.
  auto conv = named<'n'>(Conv(x, w, b));
  auto bn = named<'B'>(BatchNormalization(conv, scale, offset, mean, var, attr<"epsilon"> = epsilon));
  return rule("ConvBatchNormalization")
      .priority(1)
      .match(bn)
      .when(detail::batch_norm_folds_into(bn, w, b, scale, offset, mean, var))
      .to(rebuild(conv, input<1> = fold(detail::batch_norm_weight(w, scale, var, epsilon)),
                  input<2> = fold(detail::batch_norm_bias(b, scale, offset, mean, var, epsilon))));
}

}  // namespace xexp::patterns
