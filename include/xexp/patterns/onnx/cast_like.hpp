#pragma once
// CastLike: CastLike(x, like) is Cast(x, to=like's element type) once that type is known. onnxscript's
// torch_lib writes CastLike(alpha, other) in every aten_add and aten_sub: as a Cast of a constant it
// folds, and the Mul by alpha = 1 after it goes (Identity). Not to the float8 types, where CastLike's
// `saturate` (opset 19) would have to follow.
#include <cstdint>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace detail {
inline constexpr auto known_cast_target = rewrite::fact<"known_cast_target">([](const ValueView& like) {
  const auto t = static_cast<int32_t>(like.elem());
  return t != static_cast<int32_t>(ElemType::Undefined) && t < 17;  // 17..20: the float8 types
});
inline constexpr auto element_type_of =
    rewrite::fact<"element_type_of">([](const ValueView& like) { return static_cast<int64_t>(like.elem()); });
}  // namespace detail

inline rewrite::RulePtr cast_like_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'l'> like;
  return rule("CastLike")
      .match(CastLike(x, like))
      .when(detail::known_cast_target(like))
      .to(Cast(x, attr<"to"> = detail::element_type_of(like)));
}

}  // namespace xexp::patterns
