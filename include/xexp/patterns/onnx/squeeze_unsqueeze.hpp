#pragma once
// SqueezeUnsqueeze: Unsqueeze(Squeeze(x, a), a) and Squeeze(Unsqueeze(x, a), a) give x back when both
// name the same axes (compared after normalization, which needs the rank for negative axes).
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr squeeze_unsqueeze_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Ints<'s'> s;
  Ints<'u'> u;
  // Squeeze then Unsqueeze: both axes lists are in x's rank; Unsqueeze then Squeeze: in the unsqueezed one.
  auto unsqueezed = named<'n'>(Unsqueeze(x, attr<"axes"> = u));
  return rule("SqueezeUnsqueeze")
      .cases(match(Unsqueeze(Squeeze(x, attr<"axes"> = s), attr<"axes"> = u))
                 .when(same_axes(s, u, rank(x)))
                 .to(x),
             match(Squeeze(unsqueezed, attr<"axes"> = s)).when(same_axes(u, s, rank(unsqueezed))).to(x));
}

}  // namespace xexp::patterns
