#pragma once
// ContribRotaryEmbedding (onnxruntime set): the RotaryEmbedding rule's rotate-half form (see
// onnx/rotary_embedding.hpp for what it matches) becomes com.microsoft RotaryEmbedding(X, position_ids,
// cos_cache, sin_cache) at any opset, the caches (rows, head_size / 2) holding the first halves. Position
// ids counting 0 to seq - 1 become the offset 0: ONNX Runtime 1.30 reads int64 position_ids of shape
// (batch, seq), or of one element as an offset added to each sequence index.
// ContribRotaryEmbedding3D then moves the rotation before the Reshape + Transpose(0, 2, 1, 3) splitting
// the heads of a (batch, seq, hidden) value (the RotaryEmbedding3D rule on com.microsoft's op).
// ContribRotaryEmbeddingPartial makes a rotation of part of each head, Split + rotation + Concat, one
// node (rotary_embedding_dim, see onnx/rotary_embedding_partial.hpp).
#include "xexp/patterns/onnx/rotary_embedding.hpp"
#include "xexp/patterns/onnx/rotary_embedding_3d.hpp"
#include "xexp/patterns/onnx/rotary_embedding_partial.hpp"

namespace xexp::patterns {

namespace rotary {

inline std::optional<ir::ValueId> build_contrib_rotary(rewrite::Rewriter& r, const ValueView& x,
                                                       const std::optional<analysis::RotaryCache>& c,
                                                       const std::optional<analysis::RotaryCache>& s) {
  const int64_t head_size = x.shape()->back().value();
  return r.node(
      Symbol("RotaryEmbedding"),
      {x.id, *rotary_positions(r, x, *c, true), build_cache(r, *c, head_size), build_cache(r, *s, head_size)},
      {ir::Attribute::make_int(Symbol("interleaved"), 0)}, Symbol("com.microsoft"));
}

}  // namespace rotary

inline rewrite::RulePtr contrib_rotary_embedding_rule() {
  return rotary::rotate_half_rule(
      "ContribRotaryEmbedding", [](auto, auto) { return rewrite::opset_at_least(1); },
      rotary::build_contrib_rotary);
}

inline rewrite::RulePtr contrib_rotary_embedding_3d_rule() {
  return rotary::rotary_before_heads_split<"com.microsoft">("ContribRotaryEmbedding3D",
                                                            rewrite::opset_at_least(1));
}

inline rewrite::RulePtr contrib_rotary_embedding_partial_rule() {
  return rotary::partial_rotary<"com.microsoft">("ContribRotaryEmbeddingPartial", rewrite::opset_at_least(1));
}

}  // namespace xexp::patterns
