#pragma once
// ConvBatchNormalization: a BatchNormalization in inference mode after a Conv with constant weights goes
// into the Conv's weights and bias, as exporters of convolutional networks (paddle2onnx, torch in eval
// mode without folding) leave it:
//   BN(Conv(x, W, B)) = Conv(x, W * f, (B - mean) * f + bias),  f = scale / sqrt(var + epsilon)
// with f broadcast over the output channels (W's first axis). The folded tensors are computed with the
// evaluator's kernels in the weights' type, as the model would compute them.
#include <vector>

#include "xexp/patterns/onnx/batch_normalization_folding.hpp"

namespace xexp::patterns {

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
      .when(normalization::batch_norm_folds_into(bn, w, b, scale, offset, mean, var))
      .to(rebuild(conv, input<1> = fold(normalization::batch_norm_weight(w, scale, var, epsilon)),
                  input<2> = fold(normalization::batch_norm_bias(b, scale, offset, mean, var, epsilon))));
}

}  // namespace xexp::patterns
