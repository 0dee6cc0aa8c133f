#pragma once
// CastLike: CastLike(x, like) is Cast(x, to=like's element type) once that type is known. onnxscript's
// torch_lib writes CastLike(alpha, other) in every aten_add and aten_sub: as a Cast of a constant it
// folds, and the Mul by alpha = 1 after it goes (Identity). Not to the float8 types, where CastLike's
// `saturate` (opset 19) would have to follow.
#include <cstdint>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr cast_like_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'l'> like;
  return rule("CastLike")
      .match(CastLike(x, like))
      .when(known_cast_target(like))
      .to(Cast(x, attr<"to"> = element_type_of(like)));
}

}  // namespace xexp::patterns
