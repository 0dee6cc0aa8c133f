#pragma once
// ConvAddMul: a per-channel constant added to, multiplied with or divided into a Conv's output goes into
// the Conv's bias and weights (constant weights), as exporters leave a bias or a scale written apart:
//   Conv(x, W, B) + c = Conv(x, W, B + c)      Conv(x, W, B) * c = Conv(x, W * c, B * c)
// c being a constant of the weights' type that broadcasts along the channel axis only (one value, or
// one per output channel, shaped (C, 1, ...) or (1, C, 1, ...)); Div by c multiplies by 1 / c.
#include <optional>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace conv {
// c's values per output channel of a Conv with weights w (one value repeated, or one per channel), or
// nullopt when c broadcasts along another axis or has another type.
inline std::optional<Tensor> per_channel(const Tensor& c, const Tensor& w) {
  const std::vector<int64_t>& dims = c.dims();
  const auto rank = static_cast<int64_t>(w.dims().size()), channels = w.dims()[0];
  if (c.type() != w.type() || !is_normalization_type(c.type()) || static_cast<int64_t>(dims.size()) > rank)
    return std::nullopt;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    const int64_t axis = rank - static_cast<int64_t>(dims.size()) + static_cast<int64_t>(k);
    if (dims[k] != 1 && !(axis == 1 && dims[k] == channels)) return std::nullopt;
  }
  const Tensor flat = compute("Reshape", {c, int64_tensor({-1})});
  return compute("Expand", {flat, int64_tensor({channels})});
}
inline constexpr auto is_per_channel = rewrite::fact<"is_per_channel">(
    [](const Tensor& c, const Tensor& w) { return per_channel(c, w).has_value(); });
// The Conv's bias (zeros when absent) op c's channel values.
inline Tensor conv_bias_with(const ValueView& b, const Tensor& w, const Tensor& c, const char* op) {
  const Tensor channels = *per_channel(c, w);
  const Tensor bias = b.id == ir::kNone ? eval::filled(w.type(), {w.dims()[0]}, 0.0) : *b.constant();
  return compute(op, {bias, channels});
}
inline constexpr auto bias_plus_channels = rewrite::fact<"bias_plus_channels">(
    [](const ValueView& b, const Tensor& w, const Tensor& c) { return conv_bias_with(b, w, c, "Add"); });
inline constexpr auto bias_times_channels = rewrite::fact<"bias_times_channels">(
    [](const ValueView& b, const Tensor& w, const Tensor& c) { return conv_bias_with(b, w, c, "Mul"); });
inline constexpr auto bias_over_channels = rewrite::fact<"bias_over_channels">(
    [](const ValueView& b, const Tensor& w, const Tensor& c) { return conv_bias_with(b, w, c, "Div"); });
// W op c's channel values, broadcast over (channels, 1, ..., 1).
inline Tensor conv_weight_with(const Tensor& w, const Tensor& c, const char* op) {
  std::vector<int64_t> dims(w.dims().size(), 1);
  dims[0] = -1;
  return compute(op, {w, compute("Reshape", {*per_channel(c, w), int64_tensor(dims)})});
}
inline constexpr auto weight_times_channels = rewrite::fact<"weight_times_channels">(
    [](const Tensor& w, const Tensor& c) { return conv_weight_with(w, c, "Mul"); });
inline constexpr auto weight_over_channels = rewrite::fact<"weight_over_channels">(
    [](const Tensor& w, const Tensor& c) { return conv_weight_with(w, c, "Div"); });
}  // namespace conv

inline rewrite::RulePtr conv_add_mul_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Const<'w'> w;
  Opt<'b'> b;
  Const<'c'> c;
  // rebuild: the Conv keeps its attributes (pads, strides, group, ...), only its weights change.
  auto conv = named<'n'>(Conv(x, w, b));
  auto fits = rank(w) >= 3 && conv_bias_folds(b, w) && conv::is_per_channel(c, w);
  return rule("ConvAddMul")
      .priority(1)
      .cases(match(commutative(Add(conv, c)))
                 .when(fits)
                 .to(rebuild(conv, input<2> = fold(conv::bias_plus_channels(b, w, c)))),
             match(commutative(Mul(conv, c)))
                 .when(fits)
                 .to(rebuild(conv, input<1> = fold(conv::weight_times_channels(w, c)),
                             input<2> = choose(present(b), fold(conv::bias_times_channels(b, w, c)), b))),
             match(Div(conv, c))
                 .when(fits && nowhere_zero(c))
                 .to(rebuild(conv, input<1> = fold(conv::weight_over_channels(w, c)),
                             input<2> = choose(present(b), fold(conv::bias_over_channels(b, w, c)), b))));
}

}  // namespace xexp::patterns
