#pragma once
// BiasSoftmax (onnxruntime_training set): Softmax(x + bias) over the last axis is com.microsoft
// BiasSoftmax(x, bias), a kernel of ONNX Runtime's CUDA and ROCm builds (none on CPU). The kernel does
// not broadcast as Add does: it reads the bias once per row of x, repeated over x's leading axes
// (is_inner_broadcast=0, a causal mask (1, 1, S, S) on scores (B, H, S, S)) or over the axes just before
// the last (is_inner_broadcast=1, a padding mask (B, 1, 1, S)); other biases stay an Add. x has the
// sum's shape; the types are the kernel's (float, float16, double).
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace activation {
// How `bias` repeats over x's rows: 0 over leading axes (its dims, right-aligned, are ones and then x's
// last dims), 1 over the axes before the last (x's first dims, ones, x's last dim, at x's rank), -1
// neither.
inline constexpr auto bias_broadcast =
    rewrite::fact<"bias_broadcast">([](const ValueView& bias, const ValueView& x) -> int64_t {
      if (!bias.shape() || !x.shape() || bias.shape()->empty() || bias.shape()->size() > x.shape()->size())
        return -1;
      const Shape& b = *bias.shape();
      const Shape& s = *x.shape();
      const std::size_t offset = s.size() - b.size(), last = b.size() - 1;
      auto same_as_x = [&](std::size_t k) { return same_dim(b[k], s[k + offset]); };
      auto one = [&](std::size_t k) { return b[k] == Dim(1); };
      std::size_t k = 0;
      while (k < last && one(k)) ++k;
      while (k <= last && same_as_x(k)) ++k;
      if (k > last) return 0;
      if (offset != 0 || !same_as_x(last)) return -1;
      k = 0;
      while (k < last && same_as_x(k)) ++k;
      while (k < last && one(k)) ++k;
      return k == last ? 1 : -1;
    });
}  // namespace activation

inline rewrite::RulePtr bias_softmax_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'b'> bias;
  Int<'a'> axis;
  auto sum = named<'s'>(commutative(Add(x, bias)));
  return rule("BiasSoftmax")
      .priority(1)
      .match(Softmax(sum, attr<"axis"> = axis))
      .when(is_cpu_float(x) && is_last_axis(axis, x) && same_shape(x, sum) &&
            activation::bias_broadcast(bias, x) >= 0)
      .to(op<"BiasSoftmax", "com.microsoft">(
          x, bias, attr<"axis"> = rank(x) - 1,
          attr<"is_inner_broadcast"> = activation::bias_broadcast(bias, x)));
}

}  // namespace xexp::patterns
