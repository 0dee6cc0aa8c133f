#pragma once
// SkipSimplifiedLayerNormalization (onnxruntime set): SimplifiedLayerNormalization(a + b, gamma) over
// the last axis, statistics in float (stash_type 1), becomes com.microsoft
// SkipSimplifiedLayerNormalization(a, b, gamma), outputs (Y, mean, inv_std_var, sum): the sum takes
// over the Add's other consumers. Only epsilon is carried: SkipSimplifiedLayerNormalization has no
// stash_type, and ONNX Runtime refuses a model that sets one. a and b have the same known shape of rank 2 or
// 3, gamma is a vector over the last axis, and the SimplifiedLayerNormalization's inv_std_var is unused. Its
// attributes must be written on the node: it has no ONNX schema to read defaults from.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr skip_simplified_layer_normalization_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Var<'g'> gamma;
  Int<'A'> axis;
  Float<'e'> epsilon;
  auto sum = named<'s'>(shared(Add(a, b)));
  auto fused = let<'f'>(outputs<4>(
      op<"SkipSimplifiedLayerNormalization", "com.microsoft">(a, b, gamma, attr<"epsilon"> = epsilon)));
  return rule("SkipSimplifiedLayerNormalization")
      .priority(1)
      .match(op<"SimplifiedLayerNormalization">(sum, gamma, attr<"axis"> = axis, attr<"epsilon"> = epsilon,
                                                attr<"stash_type"> = 1))
      .when(same_shape(a, b) && is_rank_2_or_3(a) && is_last_axis(axis, a) && is_normalization_float(a) &&
            absent_or_vector_over_last_axis(gamma, a))
      .to(fused, also(sum, output<3>(fused)));
}

}  // namespace xexp::patterns
