#pragma once
// SqueezeBinaryUnsqueeze: Unsqueeze(Binary(Squeeze(d), s), [0]) with d of shape (1,) and s of rank 0 is
// Binary(d, Unsqueeze(s, [0])): the shape round trip disappears and the Unsqueeze of a constant s folds.
// Binary is Add, Sub, Mul or Div, with the squeezed operand on either side. Opset >= 13.
#include <optional>
#include <vector>

#include "xexp/patterns/constant_math.hpp"
#include "xexp/patterns/variadic_node.hpp"

namespace xexp::patterns {

namespace detail {
// The binary node again, its squeezed operand replaced by d and the other one unsqueezed on axis 0.
inline std::optional<ir::ValueId> binary_on_unsqueezed(rewrite::Rewriter& r, const rewrite::ValueView& binary,
                                                       const rewrite::ValueView& squeezed,
                                                       const rewrite::ValueView& d) {
  const ir::Node& n = node_of(binary);
  const Symbol op = n.op_type;
  const std::size_t slot = n.inputs[0] == squeezed.id ? 0 : 1;
  const ir::ValueId other = n.inputs[1 - slot];
  std::vector<ir::ValueId> inputs(2);
  inputs[slot] = d.id;
  inputs[1 - slot] =
      r.node(Symbol("Unsqueeze"), {other, r.initializer(int64_tensor({0}))});
  return r.node(op, std::move(inputs));
}
}  // namespace detail

inline rewrite::RulePtr squeeze_binary_unsqueeze_rule() {
  using namespace rewrite::dsl;
  Var<'d'> d;
  Var<'s'> s;
  Opt<'q'> squeeze_axes;
  auto squeezed = named<'z'>(Squeeze(d, squeeze_axes));
  auto checks = [&](auto binary) {
    return opset_at_least(13) && rank(d) == 1 && dim(d, 0) == 1 && rank(s) == 0 && rank(binary) == 0;
  };
  auto replacement = [&](auto binary) {
    return replace_with("binary_on_unsqueezed", detail::binary_on_unsqueezed, binary, squeezed, d);
  };
  auto first = variadic<'b', "Add|Sub|Mul|Div">(squeezed, s);
  auto second = variadic<'b', "Add|Sub|Mul|Div">(s, squeezed);
  Ints<'u'> axes;
  return rule("SqueezeBinaryUnsqueeze")
      .priority(0)
      .cases(match(Unsqueeze(first, attr<"axes"> = axes)).when(checks(first) && axes == std::vector<int64_t>{0}).to(replacement(first)),
             match(Unsqueeze(second, attr<"axes"> = axes)).when(checks(second) && axes == std::vector<int64_t>{0}).to(replacement(second)));
}

}  // namespace xexp::patterns
