#pragma once
// SkipSimplifiedLayerNormalization (onnxruntime set): SimplifiedLayerNormalization(a + b, gamma) over
// the last axis, statistics in float (stash_type 1), becomes com.microsoft
// SkipSimplifiedLayerNormalization(a, b, gamma), outputs (Y, mean, inv_std_var, sum): the sum takes
// over the Add's other consumers. Done right where the original was wrong: only epsilon is carried (the
// original copied stash_type, which SkipSimplifiedLayerNormalization does not have, and ONNX Runtime
// refuses the model). a and b have the same known shape of rank 2 or 3, gamma is a vector over the
// last axis, and the SimplifiedLayerNormalization's inv_std_var is unused. Its attributes must be
// written on the node: it has no ONNX schema to read defaults from.
#include "xexp/patterns/ort/normalization_facts.hpp"
#include "xexp/patterns/ort/normalization_outputs.hpp"
#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr skip_simplified_layer_normalization_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Var<'g'> gamma;
  Int<'x'> axis;
  Float<'e'> epsilon;
  auto sum = named<'s'>(shared(Add(a, b)));
  auto fits = same_shape(a, b) && call("is_rank_2_or_3", detail::is_rank_2_or_3, a) &&
              call("is_last_axis", detail::is_last_axis, axis, a) &&
              call("is_normalization_float", detail::is_normalization_float, dtype(a)) &&
              call("vector_over_last_axis", detail::absent_or_vector_over_last_axis, gamma, a);
  auto fused = [](Rewriter& r, const ValueView& x, const ValueView& skip, const ValueView& g, float eps,
                  const ValueView& s) -> std::optional<ir::ValueId> {
    return detail::skip_normalization(r, "SkipSimplifiedLayerNormalization", {x.id, skip.id, g.id}, eps, s.id);
  };
  return rule("SkipSimplifiedLayerNormalization")
      .priority(1)
      .match(op<"SimplifiedLayerNormalization">(sum, gamma, attr<"axis"> = axis, attr<"epsilon"> = epsilon,
                                               attr<"stash_type"> = 1))
      .when(fits)
      .to(replace_with("skip_simplified_layer_normalization", fused, a, b, gamma, epsilon, sum));
}

}  // namespace xexp::patterns
