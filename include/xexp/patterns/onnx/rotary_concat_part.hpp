#pragma once
// RotaryConcatPart: Add(Concat(A, Z), Concat(W, B)) where Z and W are zeros lined up against B and A
// (same shapes, same axis) is Concat(A, B): each half adds zeros to the other. Exporters write the
// rotary embedding's rotate_half this way, from Slices of X, one of them negated, padded with
// ConstantOfShape zeros; the padding and the Add go. No broadcasting: A and W, Z and B have the same
// known shapes, so the Add's output is the Concat's.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace detail {
// All zeros: a constant, or ConstantOfShape of zero (its default value).
inline constexpr auto is_zeros = rewrite::fact<"is_zeros">([](const ValueView& v) {
  if (const Tensor* t = rewrite::constant_tensor(*v.graph, v.id)) return equal_everywhere(*t, 0.0);
  const ir::Node* fill = producer_of(*v.graph, v.id, "ConstantOfShape");
  if (!fill) return false;
  const ir::Attribute* value = fill->attribute(Symbol("value"));
  return !value || (!value->tensors.empty() && equal_everywhere(value->tensors[0], 0.0));
});
}  // namespace detail

inline rewrite::RulePtr rotary_concat_part_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Var<'z'> z;
  Var<'w'> w;
  Int<'x'> axis;
  return rule("RotaryConcatPart")
      .priority(1)
      .match(commutative(Add(Concat(a, z, attr<"axis"> = axis), Concat(w, b, attr<"axis"> = axis))))
      .when(detail::is_zeros(z) && detail::is_zeros(w) && same_shape(a, w) && same_shape(z, b))
      .to(Concat(a, b, attr<"axis"> = axis));
}

}  // namespace xexp::patterns
