#pragma once
// MulAddConv: a Conv with constant weights reading its input scaled and shifted by one value each goes
// without them, as PP-LCNet's learnable affine blocks (paddle2onnx, PP-OCRv4) leave x * s + t before
// their Convs:
//   Conv(x * s, W, B) = Conv(x, W * s, B)
//   Conv(x * s + t, W, B) = Conv(x, W * s, B + t * sum(W))   (sum over input channels and kernel)
// The shift only into a Conv without padding: a padded Conv reads zeros around x * s + t, where the
// folded one would add t * W. s and t hold one value of the weights' type; the folded tensors are
// computed with the evaluator's kernels in that type.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace conv {
// One value of w's type, a scalar or a vector: one of higher rank could broadcast x to another rank.
inline constexpr auto one_value_like = rewrite::fact<"one_value_like">([](const Tensor& s, const Tensor& w) {
  return s.size() == 1 && s.dims().size() <= 1 && s.type() == w.type();
});
// B + t * sum(W), per output channel, B being 0 when the Conv has none.
inline constexpr auto shifted_bias = rewrite::fact<"shifted_bias">([](const ValueView& b, const Tensor& w,
                                                                      const Tensor& t) {
  std::vector<int64_t> axes;
  for (int64_t k = 1; k < static_cast<int64_t>(w.dims().size()); ++k) axes.push_back(k);
  const Tensor sums = compute("ReduceSum", {w, int64_tensor(axes)}, {ir::Attribute::make_int("keepdims", 0)});
  const Tensor shift = compute("Mul", {sums, t});
  return b.id == ir::kNone ? shift : compute("Add", {*b.constant(), shift});
});
}  // namespace conv

inline rewrite::RulePtr mul_add_conv_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Const<'s'> s;
  Const<'t'> t;
  Const<'w'> w;
  Opt<'b'> b;
  auto scaled = commutative(Mul(x, s));
  auto shifted_conv = named<'n'>(Conv(commutative(Add(scaled, t)), w, b));
  auto scaled_conv = named<'n'>(Conv(scaled, w, b));
  auto fits = rank(w) >= 3 && conv_bias_folds(b, w) && conv::one_value_like(s, w);
  // rebuild: the Conv keeps its attributes (strides, group, ...), only its input and weights change.
  return rule("MulAddConv")
      .priority(1)
      .cases(match(shifted_conv)
                 .when(fits && conv::one_value_like(t, w) && unpadded(shifted_conv))
                 .to(rebuild(shifted_conv, input<0> = x, input<1> = fold(product(w, s)),
                             input<2> = fold(conv::shifted_bias(b, w, t)))),
             match(scaled_conv)
                 .when(fits)
                 .to(rebuild(scaled_conv, input<0> = x, input<1> = fold(product(w, s)))));
}

}  // namespace xexp::patterns
