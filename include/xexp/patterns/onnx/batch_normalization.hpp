#pragma once
// BatchNormalization: in inference mode, with constant scale 1, bias 0, mean 0, variance 1 and epsilon
// 0, BatchNormalization gives its input back: (x - 0) / sqrt(1 + 0) * 1 + 0. Its other outputs (the
// running statistics of training mode) must be unused, which matching requires of every root.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr batch_normalization_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Const<'s'> scale;
  Const<'b'> bias;
  Const<'m'> mean;
  Const<'v'> var;
  Float<'e'> epsilon;
  auto bn = named<'n'>(BatchNormalization(x, scale, bias, mean, var, attr<"epsilon"> = epsilon));
  return rule("BatchNormalization")
      .match(bn)
      .when(epsilon == 0.0f && in_inference_mode(bn) && all_equal(scale, 1.0) && all_zero(bias) &&
            all_zero(mean) && all_equal(var, 1.0))
      .to(x);
}

}  // namespace xexp::patterns
