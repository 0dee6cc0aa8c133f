#pragma once
// SwapExpandReshape: Reshape(Expand(W, shape), [0, 1, -1]) with W of rank 3 and shape = [n, 1, 1] is
// Expand(Reshape(W, [0, 1, -1]), shape): the Expand only repeats dimension 0, which the Reshape keeps,
// so a constant W is reshaped once (folded) instead of reshaping the expanded tensor. The last two values
// of `shape` must be known ones: a constant, or a Concat ending with constant parts.
#include <optional>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace reshape {
// The last `count` values of a 1-D int64 shape tensor when known: a constant, or a Concat whose trailing
// parts are constants.
inline std::optional<std::vector<int64_t>> trailing_shape_values(const ir::Graph& g, ir::ValueId v,
                                                                 std::size_t count) {
  if (std::optional<std::vector<int64_t>> all = int_constant(g, v)) {
    if (all->size() < count) return std::nullopt;
    return std::vector<int64_t>(all->end() - static_cast<std::ptrdiff_t>(count), all->end());
  }
  const ir::Value& value = g.value(v);
  if (value.producer == ir::kNone) return std::nullopt;
  const ir::Node& concat = g.node(value.producer);
  if (concat.op_type != Symbol("Concat") || !concat.domain.empty()) return std::nullopt;
  std::vector<int64_t> tail;
  for (auto it = concat.inputs.rbegin(); it != concat.inputs.rend() && tail.size() < count; ++it) {
    std::optional<std::vector<int64_t>> part = int_constant(g, *it);
    if (!part) return std::nullopt;
    tail.insert(tail.begin(), part->begin(), part->end());
  }
  if (tail.size() < count) return std::nullopt;
  return std::vector<int64_t>(tail.end() - static_cast<std::ptrdiff_t>(count), tail.end());
}
inline constexpr auto expands_only_first_axis =
    rewrite::fact<"expands_only_first_axis">([](const ValueView& shape) {
      return trailing_shape_values(*shape.graph, shape.id, 2) == std::vector<int64_t>{1, 1};
    });
inline constexpr auto is_0_1_minus1 = rewrite::fact<"is_0_1_minus1">([](const Tensor& t) {
  return t.type() == ElemType::Int64 && int_values(t) == std::vector<int64_t>{0, 1, -1};
});
}  // namespace reshape

inline rewrite::RulePtr swap_expand_reshape_rule() {
  using namespace rewrite::dsl;
  Var<'w'> w;
  Var<'s'> shape;
  Const<'t'> target;
  return rule("SwapExpandReshape")
      .match(Reshape(Expand(w, shape), target, attr<"allowzero"> = 0))
      .when(rank(w) == 3 && reshape::is_0_1_minus1(target) && reshape::expands_only_first_axis(shape))
      .to(Expand(Reshape(w, target), shape));
}

}  // namespace xexp::patterns
