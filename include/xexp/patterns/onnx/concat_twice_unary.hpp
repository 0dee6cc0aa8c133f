#pragma once
// ConcatTwiceUnary: an element-wise op (or Add/Sub/Mul/Div by a scalar) after Concat(x, x) computes the
// same half twice: U(Concat(x, x)) -> Concat(U(x), U(x)), half the work. Opset >= 18.
#include "xexp/patterns/onnx/swap_unary.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr concat_twice_unary_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Int<'a'> axis;
  auto twice = [](Rewriter& r, const ValueView& op, const ValueView& half, int64_t a) -> std::optional<ir::ValueId> {
    const ir::ValueId computed = copy_node_with_input(r, node_of(op), half.id);
    return r.node(Symbol("Concat"), {computed, computed}, {ir::Attribute::make_int(Symbol("axis"), a)});
  };
  return for_each_root(ElementwiseUnaryOps{} + OpList<"Add", "Sub", "Mul", "Div">{},
                       rule("ConcatTwiceUnary").priority(1), [&]<rewrite::FixedString Op>() {
    auto op = variadic<'u', Op>(Concat(x, x, attr<"axis"> = axis));
    return match(op)
        .when(opset_at_least(18) && call("extra_inputs_are_scalars", detail::extra_inputs_are_scalars, op))
        .to(replace_with("concat_of_op", twice, op, x, axis));
  });
}

}  // namespace xexp::patterns
