#pragma once
// TransposeTranspose: two Transposes in a row are one (or none when the composed permutation is the
// identity). The first may have other consumers only when both disappear: otherwise nothing is saved.
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr transpose_transpose_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Ints<'f'> first;
  Ints<'s'> second;
  auto inner = named<'i'>(shared(Transpose(x, attr<"perm"> = first)));
  auto composed = composed_perm(first, second);
  auto identity = is_identity_perm(composed);
  return rule("TransposeTranspose")
      .match(Transpose(inner, attr<"perm"> = second))
      .when(identity || single_use(inner))
      .to(choose(identity, x, Transpose(x, attr<"perm"> = composed)));
}

}  // namespace xexp::patterns
