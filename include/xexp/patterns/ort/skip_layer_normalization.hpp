#pragma once
// SkipLayerNormalization (onnxruntime set): LayerNormalization(a + b, gamma, beta) over the last axis
// becomes com.microsoft SkipLayerNormalization(a, b, gamma, beta), whose 4th output (the sum) takes
// over the Add's other consumers (the residual branch of a transformer block). Done right where the
// original was wrong: a missing `axis` is the ONNX default -1 (the original read it as 0 and skipped),
// and epsilon is always written (SkipLayerNormalization's own default is 1e-12, LayerNormalization's
// 1e-5: the original dropped a default epsilon and changed the result). a and b must have the same known
// shape, of rank 2 or 3; gamma and beta are vectors over the last axis; statistics in float.
#include "xexp/patterns/ort/normalization_facts.hpp"
#include "xexp/patterns/ort/normalization_outputs.hpp"
#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr skip_layer_normalization_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Var<'g'> gamma;
  Opt<'c'> beta;
  Int<'x'> axis;
  Float<'e'> epsilon;
  auto sum = named<'s'>(shared(Add(a, b)));
  auto fits = same_shape(a, b) && call("is_rank_2_or_3", detail::is_rank_2_or_3, a) &&
              call("is_last_axis", detail::is_last_axis, axis, a) &&
              call("is_normalization_float", detail::is_normalization_float, dtype(a)) &&
              present(gamma) && call("vector_over_last_axis", detail::absent_or_vector_over_last_axis, gamma, a) &&
              call("absent_or_vector_over_last_axis", detail::absent_or_vector_over_last_axis, beta, a);
  auto fused = [](Rewriter& r, const ValueView& x, const ValueView& skip, const ValueView& g, const ValueView& bias,
                  float eps, const ValueView& s) -> std::optional<ir::ValueId> {
    std::vector<ir::ValueId> inputs = {x.id, skip.id, g.id};
    if (bias.id != ir::kNone) inputs.push_back(bias.id);
    return detail::skip_normalization(r, "SkipLayerNormalization", std::move(inputs), eps, s.id);
  };
  return rule("SkipLayerNormalization")
      .priority(1)
      .match(LayerNormalization(sum, gamma, beta, attr<"axis"> = axis, attr<"epsilon"> = epsilon,
                                attr<"stash_type"> = 1))
      .when(fits)
      .to(replace_with("skip_layer_normalization", fused, a, b, gamma, beta, epsilon, sum));
}

}  // namespace xexp::patterns
