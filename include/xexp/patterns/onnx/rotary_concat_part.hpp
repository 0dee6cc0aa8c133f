#pragma once
// RotaryConcatPart: Add(S, T) where S holds A followed by zeros and T zeros followed by B, over one axis,
// is Concat(A, B): each side adds zeros to the other. Exporters write the rotary embedding's rotate_half
// this way, and autograd its backward (the gradient of a Slice is the slice written into zeros). Three
// spellings of "A written into zeros" are read (zero_padded):
//   Concat(A, Z) / Concat(Z, A)                         Z zeros (a forward rotate_half)
//   ScatterElements(Z, I, A, axis)                      I = start, start+1, ... along the axis (torch's
//                                                       slice_scatter / Slice backward)
//   Transpose(ScatterND(Transpose(Z, p), R, Transpose(A, p)), inverse(p))
//                                                       R = [[start], [start+1], ...]: the same scatter
//                                                       on axis p[0], as onnxscript writes it
// The padding, the scatters and the Add go. No broadcasting: S and T have the same known shape, the parts
// line up against each other's zeros and cover the axis together.
#include "xexp/patterns/analysis/zero_padding.hpp"

namespace xexp::patterns {

namespace rotary {
inline constexpr auto pad_each_other = rewrite::fact<"pad_each_other">(analysis::pads_each_other);
inline constexpr auto padded_part = rewrite::fact<"padded_part">([](const ValueView& v) {
  return ValueView{v.graph, analysis::zero_padded(*v.graph, v.id)->part};
});
inline constexpr auto padded_axis = rewrite::fact<"padded_axis">(
    [](const ValueView& v) { return analysis::zero_padded(*v.graph, v.id)->axis; });
}  // namespace rotary

inline rewrite::RulePtr rotary_concat_part_rule() {
  using namespace rewrite::dsl;
  Var<'s'> s;
  Var<'t'> t;
  return rule("RotaryConcatPart")
      .priority(1)
      .match(commutative(Add(s, t)))
      .when(rotary::pad_each_other(s, t))
      .to(Concat(found(rotary::padded_part(s)), found(rotary::padded_part(t)),
                 attr<"axis"> = rotary::padded_axis(s)));
}

}  // namespace xexp::patterns
