#pragma once
// ShapeBasedStaticReshape: Reshape(X, shape computed by nodes) whose output shape is known becomes
// Reshape(X, constant), so that the computation of the shape (Shape, Gather, Unsqueeze, Concat...) can go.
// Each dimension is written as what it is known to be: its static size; 0 when it is the symbol X has at the
// same position (Reshape copies that dimension; needs allowzero=0); -1 for one dimension neither (Reshape
// computes it from the element count). Declines with two such dimensions, or a static size 0 without
// allowzero (0 would copy). experimental-experiment aligns the symbols by an edit distance
// (ShapeBasedEditDistanceReshape); Reshape's 0 copies by position only, so position is what counts.
// As with every -1, a zero-sized X makes that dimension ambiguous: Reshape then fails at run time.
#include <optional>
#include <vector>

#include "xexp/patterns/onnx/static_concat_reshape.hpp"

namespace xexp::patterns {

namespace reshape {
inline constexpr auto static_reshape_target = rewrite::fact<"static_reshape_target">(
    [](const ValueView& x, const ValueView& reshape) -> std::optional<std::vector<int64_t>> {
      // A shape the graph computes; one given as a graph input is the caller's to choose.
      const ir::ValueId shape = rewrite::input_of(reshape, 1);
      if (!x.shape() || !reshape.shape() || reshape.graph->value(shape).producer == ir::kNone)
        return std::nullopt;
      const bool allowzero = reshape::reshape_allows_zero(reshape);
      const Shape& in = *x.shape();
      const Shape& out = *reshape.shape();
      std::vector<int64_t> target;
      bool minus_one = false;
      for (std::size_t k = 0; k < out.size(); ++k) {
        const Dim& d = out[k];
        if (d.is_static() && (d.value() != 0 || allowzero)) {
          target.push_back(d.value());
        } else if (!allowzero && d.is_symbolic() && k < in.size() && in[k] == d) {
          target.push_back(0);
        } else if (!minus_one && !d.is_static()) {
          target.push_back(-1);
          minus_one = true;
        } else {
          return std::nullopt;
        }
      }
      // allowzero=1 forbids a 0 next to a -1.
      if (allowzero && minus_one && std::find(target.begin(), target.end(), 0) != target.end())
        return std::nullopt;
      return target;
    });
}  // namespace reshape

inline rewrite::RulePtr shape_based_static_reshape_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'s'> shape;
  auto reshape = named<'r'>(Reshape(x, shape));
  auto target = reshape::static_reshape_target(x, reshape);
  return rule("ShapeBasedStaticReshape")
      .match(reshape)
      .when(!is_constant(shape) && has_value(target))
      .to(rebuild(reshape, x, fold(as_tensor(target))));
}

}  // namespace xexp::patterns
