#pragma once
// RotaryEmbedding (opset >= 23): rotary embeddings in the "rotate half" form exporters write for
// Llama-like models,
//   X * cos + Concat(-X2, X1, axis=-1) * sin
// where X1 and X2 are the first and second halves of the last axis of X (two Slices or one Split), X is
// (batch, heads, seq, head_size) and cos, sin are broadcast over the heads with equal halves on their last
// axis, become ONNX's RotaryEmbedding(X, cos_cache, sin_cache, position_ids), the caches
// (rows, head_size / 2) holding the first halves and position_ids (batch, seq) picking a row for each
// position. cos and sin are either
//  - constants (a static export once folded): the caches are their rows, read from row 0 (one row per
//    position; a cos differing between batches gets a row per (batch, position));
//  - Unsqueeze(Gather(table, position_ids), axes=[1]) with a constant table, possibly Slice'd from row 0
//    first (a dynamic export): that changes no gathered row, so the caches come from the whole table;
//  - Unsqueeze(Slice(table, 0, seq, axes=[0]), axes=[0, 1]) of a constant table, cut at run time to the
//    sequence length (a dynamic export of cos_cached[:seq]): rows read from row 0 of the whole table;
//  - Unsqueeze(Cos(Concat(angles, angles, axis=-1)) [* scalar], axes=[1]) and Sin alike (newer Llama and
//    Phi code computes them from the position ids): the caches are Cos(angles) and Sin(angles) reshaped
//    to rows, read from row 0 when the angles have a batch of 1, one row per (batch, position) for a
//    static batch, counted when the model runs for a dynamic one (Phi-3's);
//  - Cos(Concat(angles, angles, axis=-1)) [* scalar] of (seq, head_size), broadcast over the batch and
//    the heads (older Llama code, emb.cos(), or emb.cos()[None, None], an Unsqueeze of axes [0, 1]): the
//    caches are Cos(angles) and Sin(angles), read from row 0.
// Rows read from row 0 need a static batch and sequence here (ONNX's op has no offset form): the ids
// are a constant. The onnxruntime set's ContribRotaryEmbedding is the same rule writing com.microsoft
// RotaryEmbedding at any opset; listed after this one, at opset 23 it finds the rotations already fused.
#include <optional>

#include "xexp/patterns/onnx/rotary_cache_builders.hpp"
#include "xexp/patterns/onnx/rotary_rotate_half.hpp"
#include "xexp/patterns/onnx/shape_based_identity.hpp"
#include "xexp/patterns/shape_values.hpp"

namespace xexp::patterns {

namespace rotary {

// ONNX's RotaryEmbedding has no offset form: rows read from a fixed offset need a static batch and
// sequence, whose ids rotary_positions writes. Decided when matching, not by the build declining, so
// that the onnxruntime set's rule, which has the offset form, gets the match.
inline constexpr auto has_onnx_positions =
    rewrite::fact<"has_onnx_positions">([](const ValueView& x, const std::optional<analysis::RotaryCache>& c) {
      if (!c) return false;  // x is (batch, heads, seq, head_size) where there is a cache
      const Shape& xs = *x.shape();
      return c && (c->positions != ir::kNone || c->counted_at_run_time || c->fixed_positions.rank() == 2 ||
                   (xs[0].is_static() && xs[2].is_static()));
    });

inline std::optional<ir::ValueId> build_onnx_rotary(rewrite::Rewriter& r, const ValueView& x,
                                                    const std::optional<analysis::RotaryCache>& c,
                                                    const std::optional<analysis::RotaryCache>& s) {
  const std::optional<ir::ValueId> positions = rotary_positions(r, x, *c, false);
  if (!positions) return std::nullopt;
  const int64_t head_size = x.shape()->back().value();
  return r.node(Symbol("RotaryEmbedding"),
                {x.id, build_cache(r, *c, head_size), build_cache(r, *s, head_size), *positions},
                {ir::Attribute::make_int(Symbol("interleaved"), 0)});
}

}  // namespace rotary


inline rewrite::RulePtr rotary_embedding_rule() {
  return rotary::rotate_half_rule(
      "RotaryEmbedding",
      [](auto x, auto cos_cache) {
        return rewrite::opset_at_least(23) && rotary::has_onnx_positions(x, cos_cache);
      },
      rotary::build_onnx_rotary);
}

}  // namespace xexp::patterns
