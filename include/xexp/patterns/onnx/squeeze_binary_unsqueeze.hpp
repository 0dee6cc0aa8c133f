#pragma once
// SqueezeBinaryUnsqueeze: Unsqueeze(Binary(Squeeze(d), s), [0]) with d of shape (1,) and s of rank 0 is
// Binary(d, Unsqueeze(s, [0])): the shape round trip disappears and the Unsqueeze of a constant s folds.
// Binary is Add, Sub, Mul or Div, with the squeezed operand on either side. Opset >= 13.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr squeeze_binary_unsqueeze_rule() {
  using namespace rewrite::dsl;
  Var<'d'> d;
  Var<'s'> s;
  Opt<'S'> squeeze_axes;
  Ints<'a'> axes;
  auto squeezed = named<'z'>(Squeeze(d, squeeze_axes));
  auto first = named<'b'>(op<"Add|Sub|Mul|Div">(squeezed, s));
  auto second = named<'b'>(op<"Add|Sub|Mul|Div">(s, squeezed));
  auto fits = [&](auto binary) {
    return opset_at_least(13) && rank(d) == 1 && dim(d, 0) == 1 && rank(s) == 0 && rank(binary) == 0 &&
           axes == std::vector<int64_t>{0};
  };
  auto unsqueezed = Unsqueeze(s, fold(int64_tensor({0})));
  return rule("SqueezeBinaryUnsqueeze")
      .cases(match(Unsqueeze(first, attr<"axes"> = axes)).when(fits(first)).to(rebuild(first, d, unsqueezed)),
             match(Unsqueeze(second, attr<"axes"> = axes))
                 .when(fits(second))
                 .to(rebuild(second, unsqueezed, d)));
}

}  // namespace xexp::patterns
