#pragma once
// ReduceSumToMean: ReduceSum(z) * (1/N), N the count of elements each output adds up (z's dims on the
// reduced axes, known), is ReduceMean(z): one node instead of two. The sum may sit in a product
// first, p * ReduceSum(z) * (1/N) = p * ReduceMean(z). Training graphs leave the factor negative in
// every RMSNorm backward, x * (rstd³ * ReduceSum(g * x)) * (-1/N) added to the other gradient term:
// a + x * (p * ReduceSum(z) * (-1/N)) is a - x * (p * ReduceMean(z)), the sign going into a Sub.
// LayerNorm's backward scales its gradient by N and the result by 1/N:
// (r / N) * (N * g - ReduceSum(g) - y * ReduceSum(h)) is r * (g - ReduceMean(g) - y * ReduceMean(h)),
// two nodes fewer. A factor 1/N (or N) is exact within its type's rounding (2^-24 relative for float).
#include <cmath>

#include "xexp/patterns/facts.hpp"
#include "xexp/patterns/onnx/reduce_reshape.hpp"

namespace xexp::patterns {

namespace reduce {
// The count of elements `sum` (a ReduceSum of z) adds into each of its outputs, when its axes and the
// dims they reduce are known.
inline std::optional<double> summed_count(const ValueView& sum, const ValueView& z) {
  if (!z.shape()) return std::nullopt;
  std::optional<std::vector<int64_t>> axes = reduced_axes(sum, static_cast<int64_t>(z.shape()->size()));
  if (!axes || axes->empty()) return std::nullopt;
  double count = 1;
  for (int64_t axis : *axes) {
    const Dim& d = (*z.shape())[static_cast<std::size_t>(axis)];
    if (!d.is_static() || d.value() == 0) return std::nullopt;
    count *= static_cast<double>(d.value());
  }
  return count;
}
// c, a float scalar of z's type, is count^power * sign, count what `sum` adds up per output.
inline bool scales_by_count(const ValueView& sum, const ValueView& z, const Tensor& c, double power,
                            double sign) {
  const double roundoff = unit_roundoff(c.type());
  if (roundoff == 0 || c.size() != 1 || c.type() != z.elem()) return false;
  const std::optional<double> count = summed_count(sum, z);
  return count &&
         std::abs(eval::element_as_double(c, 0) / (std::pow(*count, power) * sign) - 1) <= 2 * roundoff;
}
// c is sign / N: the factor that makes the sum a mean.
inline constexpr auto averages =
    rewrite::fact<"averages">([](const ValueView& sum, const ValueView& z, const Tensor& c, double sign) {
      return scales_by_count(sum, z, c, -1, sign);
    });
// c is N itself.
inline constexpr auto is_count =
    rewrite::fact<"is_count">([](const ValueView& sum, const ValueView& z, const Tensor& c) {
      return scales_by_count(sum, z, c, 1, 1);
    });
}  // namespace reduce

inline rewrite::RulePtr reduce_sum_to_mean_rule() {
  using namespace rewrite::dsl;
  Var<'z'> z;
  Var<'p'> p;
  Var<'x'> x;
  Var<'a'> a;
  Const<'c'> c;
  Ints<'A'> axes;
  Int<'k'> keepdims;
  auto sum = named<'s'>(ReduceSum(z, attr<"axes"> = axes, attr<"keepdims"> = keepdims));
  auto mean = ReduceMean(z, attr<"axes"> = axes, attr<"keepdims"> = keepdims);
  // The scalar may not raise the rank of what it multiplies.
  auto fits = [&](double sign) { return reduce::averages(sum, z, c, sign) && rank(c) <= rank(sum); };
  auto scaled_product = commutative(Mul(commutative(Mul(sum, p)), c));
  // LayerNorm's backward: g's sum (z is g), h's sum.
  Var<'h'> h;
  Ints<'H'> h_axes;
  Int<'K'> keepdims2;
  Const<'n'> n;
  auto sum2 = named<'t'>(ReduceSum(h, attr<"axes"> = h_axes, attr<"keepdims"> = keepdims2));
  auto mean2 = ReduceMean(h, attr<"axes"> = h_axes, attr<"keepdims"> = keepdims2);
  auto centered = Sub(Sub(commutative(Mul(z, n)), sum), commutative(Mul(x, sum2)));
  return rule("ReduceSumToMean")
      .priority(1)
      .cases(match(commutative(Mul(sum, c))).when(fits(1.0)).to(mean),
             match(scaled_product).when(fits(1.0)).to(Mul(mean, p)),
             match(commutative(Add(a, commutative(Mul(x, scaled_product)))))
                 .when(fits(-1.0))
                 .to(Sub(a, Mul(x, Mul(mean, p)))),
             match(commutative(Mul(Div(a, c), centered)))
                 .when(reduce::is_count(sum, z, c) && reduce::is_count(sum, z, n) &&
                       reduce::is_count(sum2, h, n) && rank(c) <= rank(a) && rank(n) <= rank(z))
                 .to(Mul(a, Sub(Sub(z, mean), Mul(x, mean2)))));
}

}  // namespace xexp::patterns
