#pragma once
// LeakyRelu: Where(x > 0, x, x * slope) is LeakyRelu(x, alpha=slope), for a scalar constant slope that a
// float attribute holds exactly (same numbers then), and a known rank of x that the constants do not
// raise. Opset >= 6.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace detail {
inline constexpr auto exact_in_float = rewrite::fact<"exact_in_float">([](const Tensor& t) {
  const double v = eval::element_as_double(t, 0);
  return static_cast<double>(static_cast<float>(v)) == v;
});
}  // namespace detail

inline rewrite::RulePtr leaky_relu_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Const<'z'> zero;
  Const<'s'> slope;
  return rule("LeakyRelu")
      .match(op<"Where">(op<"Greater">(x, zero), x, commutative(Mul(x, slope))))
      .when(is_scalar(zero) && is_scalar(slope) && rank(x) >= rank(zero) && rank(x) >= rank(slope) &&
            all_zero(zero) && detail::exact_in_float(slope))
      .to(op<"LeakyRelu">(x, attr<"alpha"> = scalar_float(slope)));
}

}  // namespace xexp::patterns
