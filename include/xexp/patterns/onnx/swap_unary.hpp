#pragma once
// SwapUnary: an element-wise op after a Transpose or Reshape runs first, on the untransformed input, so
// that the layout ops meet each other (TransposeTranspose, ReshapeReshape). The op is unary, or Add, Sub,
// Mul, Div with a second input of shape () or (1,). Only ops that compute each element alone qualify: the
// original also moved Softmax, LogSoftmax, CumSum and PRelu, which read an axis or broadcast a tensor
// that the layout change moves (see ElementwiseUnaryOps), and moved a binary op with a (1,) operand past a
// Reshape to rank 0, which changes the output shape; both ranks must be > 0 here.
#include <optional>

#include "xexp/patterns/node_copy.hpp"
#include "xexp/patterns/root_family.hpp"
#include "xexp/patterns/variadic_node.hpp"

namespace xexp::patterns {

namespace detail {
// Inputs after the first (Clip's bounds, a binary op's second operand) are scalars, not the moved value.
inline bool extra_inputs_are_scalars(const rewrite::ValueView& op) {
  const ir::Node& n = node_of(op);
  for (std::size_t k = 1; k < n.inputs.size(); ++k) {
    if (n.inputs[k] == ir::kNone) continue;
    const ir::Value& v = op.graph->value(n.inputs[k]);
    if (n.inputs[k] == n.inputs[0] || !v.shape || !rewrite::facts::is_scalar(*v.shape)) return false;
  }
  return true;
}
// op(layout(x, ...), ...) -> layout(op(x, ...), ...), both nodes rebuilt with their attributes.
inline std::optional<ir::ValueId> op_before_layout(rewrite::Rewriter& r, const rewrite::ValueView& op,
                                                   const rewrite::ValueView& layout) {
  const ir::ValueId computed = copy_node_with_input(r, node_of(op), input_of(layout, 0));
  return copy_node_with_input(r, node_of(layout), computed);
}
}  // namespace detail

inline rewrite::RulePtr swap_unary_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  auto layout = variadic<'t', "Transpose|Reshape">(x);
  return for_each_root(ElementwiseUnaryOps{} + OpList<"Add", "Sub", "Mul", "Div">{}, rule("SwapUnary").priority(0),
                       [&]<rewrite::FixedString Op>() {
    auto op = variadic<'u', Op>(layout);
    return match(op)
        .when(rank(x) > 0 && rank(layout) > 0 && call("extra_inputs_are_scalars", detail::extra_inputs_are_scalars, op))
        .to(replace_with("op_before_layout", detail::op_before_layout, op, layout));
  });
}

}  // namespace xexp::patterns
