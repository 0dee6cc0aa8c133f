#pragma once
// LayerNormalization: the decomposition exporters write (torch up to opset 16, paddle2onnx, tf2onnx),
//   d = x - ReduceMean(x, axes);  y = d / Sqrt(ReduceMean(Pow(d, 2), axes) + eps)
// over trailing axes (keepdims=1), becomes LayerNormalization(x, ones, zeros) (opset >= 17). The square
// may be Mul(d, d), the division a Mul by Reciprocal(Sqrt(...)); epsilon is a Constant node or an
// initializer. `d` feeds several nodes: a named DAG node. Without the Add, epsilon is 0 (the
// decomposition's exact value). The onnxruntime set fuses it at any opset (LayerNormalizationAnyOpset).
#include <algorithm>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace normalization {
// The rule, fused where `opset_fits` holds: the default set needs LayerNormalization in the model's
// opset, the onnxruntime set does not.
template <class OpsetFits>
rewrite::RulePtr layer_normalization_decomposition(const char* name, OpsetFits opset_fits) {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Ints<'a'> axes;
  Ints<'A'> axes2;
  Const<'e'> eps;
  auto d = named<'d'>(Sub(x, ReduceMean(x, attr<"axes"> = axes, attr<"keepdims"> = 1)));
  auto square = either(Pow(d, 2.0), Mul(d, d));
  auto variance = ReduceMean(square, attr<"axes"> = axes2, attr<"keepdims"> = 1);
  auto axis = first_trailing_axis(x, axes);
  auto fits = opset_fits && axes == axes2 && axis >= 0 && is_normalization_float(x);
  auto divided = [&](const auto& root) {
    return either(Div(d, root), commutative(Mul(d, Reciprocal(root))));
  };
  auto normalized = [&](const auto& epsilon) {
    return LayerNormalization(x, fold(filled_from(x, axis, 1.0)), fold(filled_from(x, axis, 0.0)),
                              attr<"axis"> = axis, attr<"epsilon"> = epsilon, attr<"stash_type"> = 1);
  };
  return rule(name).priority(1).cases(
      match(divided(Sqrt(commutative(Add(variance, eps))))).when(fits && is_scalar(eps)).to(normalized(scalar_float(eps))),
      match(divided(Sqrt(variance))).when(fits).to(normalized(0.0f)));
}
}  // namespace normalization

inline rewrite::RulePtr layer_normalization_rule() {
  return normalization::layer_normalization_decomposition("LayerNormalization", rewrite::opset_at_least(17));
}

}  // namespace xexp::patterns
