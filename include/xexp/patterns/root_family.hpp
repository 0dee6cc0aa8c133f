#pragma once
// Rules whose root may be any of several op types ("any element-wise unary op"): the driver indexes a
// rule by the op types of its roots and a DSL root names one op type, so the rule gets one case per op
// type, all built by the same generic lambda.
//
//   for_each_root(OpList<"Relu", "Tanh">{}, rule("X").priority(1), [&]<rewrite::FixedString Op>() {
//     return rewrite::match(variadic<'u', Op>(x)).to(...);
//   });
#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

template <rewrite::FixedString... Ops>
struct OpList {};
template <rewrite::FixedString... A, rewrite::FixedString... B>
constexpr OpList<A..., B...> operator+(OpList<A...>, OpList<B...>) {
  return {};
}

// Ops computing each element from the same element of their first input (attributes and scalar extra
// inputs such as Clip's bounds aside): they commute with any Transpose, Reshape or Expand. Not here:
// Softmax, LogSoftmax, Hardmax, CumSum (they read an axis), PRelu (its slope broadcasts).
using ElementwiseUnaryOps =
    OpList<"Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Cast", "Ceil", "Celu", "Clip", "Cos", "Cosh",
           "Elu", "Erf", "Exp", "Floor", "Gelu", "HardSigmoid", "HardSwish", "IsInf", "IsNaN", "LeakyRelu", "Log",
           "Mish", "Neg", "Not", "Reciprocal", "Relu", "Round", "Selu", "Sigmoid", "Sign", "Sin", "Sinh", "Softplus",
           "Softsign", "Sqrt", "Tan", "Tanh", "ThresholdedRelu">;

template <rewrite::FixedString... Ops, class MakeCase>
rewrite::RulePtr for_each_root(OpList<Ops...>, const rewrite::RuleStart& start, MakeCase&& make_case) {
  return start.cases(make_case.template operator()<Ops>()...);
}
// Two cases per op type (an operand on either side): all the first ones, then all the second ones.
template <rewrite::FixedString... Ops, class MakeFirst, class MakeSecond>
rewrite::RulePtr for_each_root(OpList<Ops...>, const rewrite::RuleStart& start, MakeFirst&& make_first,
                               MakeSecond&& make_second) {
  return start.cases(make_first.template operator()<Ops>()..., make_second.template operator()<Ops>()...);
}

}  // namespace xexp::patterns
