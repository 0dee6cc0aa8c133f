#pragma once
// ReduceReshape: Reduce*(X, keepdims=1) followed by a Reshape that only drops the reduced axes is
// Reduce*(X, keepdims=0). Checked on shapes: the Reshape's output is the reduction's output without the
// reduced axes (known dims only). The same for a Squeeze: ShapeBasedReshapeIsSqueeze, at priority 0,
// turns such a Reshape into one first (a training graph's bias gradients, ReduceSum over batch and
// sequence then back to the bias's shape).
#include <algorithm>
#include <optional>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace reduce {
// The reduced axes (non-negative), or nullopt when they are not known or when the node reduces nothing.
inline std::optional<std::vector<int64_t>> reduced_axes(const ValueView& reduce, int64_t rank) {
  const ir::Node& n = rewrite::node_of(reduce);
  std::optional<std::vector<int64_t>> read =
      ints_attribute_or_input(*reduce.graph, n, "axes", 1, std::vector<int64_t>{});
  if (!read) return std::nullopt;
  std::vector<int64_t> axes = std::move(*read);
  if (axes.empty()) {
    if (int_attribute(n, "noop_with_empty_axes", 0) != 0) return std::nullopt;
    for (int64_t k = 0; k < rank; ++k) axes.push_back(k);
  }
  for (int64_t& axis : axes) {
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return std::nullopt;
  }
  return axes;
}
inline constexpr auto drops_reduced_axes =
    rewrite::fact<"drops_reduced_axes">([](const ValueView& reduce, const ValueView& reshaped) {
      if (!reduce.shape() || !reshaped.shape()) return false;
      const Shape& kept = *reduce.shape();
      std::optional<std::vector<int64_t>> axes = reduced_axes(reduce, static_cast<int64_t>(kept.size()));
      if (!axes) return false;
      Shape expected;
      for (std::size_t k = 0; k < kept.size(); ++k)
        if (std::find(axes->begin(), axes->end(), static_cast<int64_t>(k)) == axes->end())
          expected.push_back(kept[k]);
      return rewrite::facts::same_shape(expected, *reshaped.shape());
    });
}  // namespace reduce

inline rewrite::RulePtr reduce_reshape_rule() {
  using namespace rewrite::dsl;
  auto reduce =
      named<'r'>(op<"ReduceSum|ReduceMean|ReduceMax|ReduceMin|ReduceProd|ReduceL1|ReduceL2|ReduceLogSum|"
                    "ReduceLogSumExp|ReduceSumSquare">(etc, attr<"keepdims"> = 1));
  auto reshape = named<'o'>(op<"Reshape|Squeeze">(reduce, etc));
  return rule("ReduceReshape")
      .priority(1)
      .match(reshape)
      .when(reduce::drops_reduced_axes(reduce, reshape))
      .to(rebuild(reduce, attr<"keepdims"> = 0));
}

}  // namespace xexp::patterns
