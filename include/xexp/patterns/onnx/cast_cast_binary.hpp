#pragma once
// CastCastBinary: Add/Sub/Mul/Div(Cast(a, to=U), Cast(b, to=U)) with a and b of the same float type T at
// least as precise as U is Cast(Binary(a, b), to=U): one Cast instead of two, and the op rounds once
// instead of twice (so the result may differ by one ulp of U, closer to the exact value). The original
// meant to refuse a T less precise than U (computing in float16 what the model computes in float32) and
// float/int mixes, but compared the input type with itself; both are refused here.
#include "xexp/patterns/root_family.hpp"
#include "xexp/patterns/variadic_node.hpp"

namespace xexp::patterns {

namespace detail {
// 3 double, 2 float, 1 float16 or bfloat16, 0 anything else.
inline int float_precision(ElemType t) {
  switch (t) {
    case ElemType::Double: return 3;
    case ElemType::Float: return 2;
    case ElemType::Float16:
    case ElemType::BFloat16: return 1;
    default: return 0;
  }
}
// T strictly more precise than U (T == U is CastPattern's job).
inline bool computes_at_least_as_precisely(ElemType t, ElemType u) {
  return float_precision(u) > 0 && float_precision(t) > float_precision(u);
}
}  // namespace detail

inline rewrite::RulePtr cast_cast_binary_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Int<'u'> to;
  auto left = Cast(a, attr<"to"> = to);
  auto right = Cast(b, attr<"to"> = to);
  return for_each_root(OpList<"Add", "Sub", "Mul", "Div">{}, rule("CastCastBinary").priority(1),
                       [&]<rewrite::FixedString Op>() {
    return match(op<Op>(left, right))
        .when(dtype(a) == dtype(b) &&
              call("more_precise", [](ElemType t, int64_t u) {
                return detail::computes_at_least_as_precisely(t, static_cast<ElemType>(u));
              }, dtype(a), to))
        .to(Cast(op<Op>(a, b), attr<"to"> = to));
  });
}

}  // namespace xexp::patterns
