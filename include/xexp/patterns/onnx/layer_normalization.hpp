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

namespace detail {
// The first normalized axis when `axes` are the trailing axes of x, with static dims; else -1.
inline constexpr auto trailing_axis = rewrite::fact<"trailing_axis">(
    [](const ValueView& x, const std::vector<int64_t>& axes, const std::vector<int64_t>& axes2) -> int64_t {
      if (axes != axes2 || axes.empty() || !x.shape()) return -1;
      const auto rank = static_cast<int64_t>(x.shape()->size());
      std::vector<int64_t> sorted;
      for (int64_t a : axes) sorted.push_back(a < 0 ? a + rank : a);
      std::sort(sorted.begin(), sorted.end());
      for (std::size_t k = 0; k < sorted.size(); ++k)
        if (sorted[k] != rank - static_cast<int64_t>(sorted.size() - k) ||
            !(*x.shape())[sorted[k]].is_static())
          return -1;
      return sorted.front();
    });
// Ones (or zeros) of x's type over the normalized trailing dims.
inline constexpr auto filled = rewrite::fact<"filled">([](const ValueView& x, int64_t axis, double value) {
  std::vector<int64_t> dims;
  for (std::size_t k = static_cast<std::size_t>(axis); k < x.shape()->size(); ++k)
    dims.push_back((*x.shape())[k].value());
  return eval::filled(x.elem(), dims, value);
});

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
  auto axis = trailing_axis(x, axes, axes2);
  auto fits = opset_fits && axis >= 0 && is_normalization_float(x);
  auto divided = [&](const auto& root) {
    return either(Div(d, root), commutative(Mul(d, Reciprocal(root))));
  };
  auto normalized = [&](const auto& epsilon) {
    return LayerNormalization(x, fold(filled(x, axis, 1.0)), fold(filled(x, axis, 0.0)), attr<"axis"> = axis,
                              attr<"epsilon"> = epsilon, attr<"stash_type"> = 1);
  };
  return rule(name).priority(1).cases(
      match(divided(Sqrt(commutative(Add(variance, eps))))).when(fits && is_scalar(eps)).to(normalized(scalar_float(eps))),
      match(divided(Sqrt(variance))).when(fits).to(normalized(0.0f)));
}
}  // namespace detail

inline rewrite::RulePtr layer_normalization_rule() {
  return detail::layer_normalization_decomposition("LayerNormalization", rewrite::opset_at_least(17));
}

}  // namespace xexp::patterns
