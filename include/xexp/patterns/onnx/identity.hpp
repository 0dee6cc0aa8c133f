#pragma once
// Identity: operations that return their input unchanged: x + 0, x - 0, x * 1, x / 1 (the constant a
// scalar, or 1-D along the last axis, so that broadcasting cannot change the shape), and a Transpose
// whose permutation is the identity.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace detail {
// `c` is `value` everywhere, has x's type, and broadcasting with it keeps x's shape.
inline constexpr auto is_neutral =
    rewrite::fact<"is_neutral">([](const ValueView& x, const Tensor& c, double value) {
      if (!x.shape() || c.type() != x.elem() || !equal_everywhere(c, value)) return false;
      const auto rank = static_cast<int64_t>(x.shape()->size());
      if (c.size() == 1) return static_cast<int64_t>(c.rank()) <= rank;
      return c.rank() == 1 && rank >= 1 && x.shape()->back() == Dim(c.dims()[0]);
    });
}  // namespace detail

inline rewrite::RulePtr identity_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Const<'c'> c;
  Ints<'p'> perm;
  auto is_zero = detail::is_neutral(x, c, 0.0);
  auto is_one = detail::is_neutral(x, c, 1.0);
  return rule("Identity")
      .cases(match(commutative(Add(x, c))).when(is_zero).to(x), match(Sub(x, c)).when(is_zero).to(x),
             match(commutative(Mul(x, c))).when(is_one).to(x), match(Div(x, c)).when(is_one).to(x),
             match(Transpose(x, attr<"perm"> = perm)).when(is_identity_perm(perm)).to(x));
}

}  // namespace xexp::patterns
