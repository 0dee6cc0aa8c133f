#pragma once
// RotaryEmbedding3D (opset >= 23): the rotation of RotaryEmbedding moved before the Reshape +
// Transpose(0, 2, 1, 3) splitting the heads of a (batch, seq, hidden) value: ONNX's RotaryEmbedding
// with num_heads rotates that value as well, and an attention fusion sees q and k as
// Transpose(Reshape(3-D)) again. The onnxruntime set's ContribRotaryEmbedding3D is the same rule on
// com.microsoft RotaryEmbedding.
#include <vector>

#include "xexp/patterns/facts.hpp"
#include "xexp/patterns/analysis/heads_layout.hpp"

namespace xexp::patterns {

namespace rotary {
// The rule `name` on RotaryEmbedding of `Domain`, where `opset_fits` holds. Only the rotated input
// moves: the others (caches and positions, in either op's order) stay as they are.
template <rewrite::FixedString Domain, class OpsetFits>
rewrite::RulePtr rotary_before_heads_split(const char* name, OpsetFits opset_fits) {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'S'> shape;
  Var<'p'> p;
  Var<'c'> c;
  Var<'s'> s;
  const std::vector<int64_t> heads_first = analysis::heads_swap();
  auto reshaped = named<'m'>(Reshape(x, shape));
  auto rotary =
      named<'e'>(op<"RotaryEmbedding", Domain>(Transpose(reshaped, attr<"perm"> = heads_first), p, c, s));
  return rule(name)
      .priority(1)
      .match(rotary)
      .when(opset_fits && analysis::splits_heads(x, reshaped))
      .to(Transpose(
          Reshape(rebuild(rotary, input<0> = x, attr<"num_heads"> = analysis::split_heads_count(x, reshaped)), shape),
          attr<"perm"> = heads_first));
}
}  // namespace rotary

inline rewrite::RulePtr rotary_embedding_3d_rule() {
  return rotary::rotary_before_heads_split<"">("RotaryEmbedding3D", rewrite::opset_at_least(23));
}

}  // namespace xexp::patterns
