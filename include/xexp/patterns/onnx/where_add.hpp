#pragma once
// WhereAdd: x + Where(mask, 0, ±inf) (an additive attention mask) is Where(mask, x, ±inf). Both constants
// are scalars of the same shape, so the output shape does not change. An x of -inf or NaN where the mask
// is false gives ±inf instead of NaN.
#include <cmath>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace detail {
inline constexpr auto zero_and_infinite =
    rewrite::fact<"zero_and_infinite">([](const Tensor& z, const Tensor& i) {
      return z.dims() == i.dims() && equal_everywhere(z, 0.0) && std::isinf(eval::element_as_double(i, 0));
    });
}  // namespace detail

inline rewrite::RulePtr where_add_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'m'> mask;
  Const<'z'> zero;
  Const<'i'> inf;
  return rule("WhereAdd")
      .priority(1)
      .match(commutative(Add(x, Where(mask, zero, inf))))
      .when(is_scalar(zero) && is_scalar(inf) && detail::zero_and_infinite(zero, inf))
      .to(Where(mask, x, inf));
}

}  // namespace xexp::patterns
