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
//    the heads (older Llama code, emb.cos()): the caches are Cos(angles) and Sin(angles), read from row 0.
// Rows read from row 0 need a static batch and sequence here (ONNX's op has no offset form): the ids
// are a constant. The onnxruntime set's ContribRotaryEmbedding is the same rule writing com.microsoft
// RotaryEmbedding at any opset; listed after this one, at opset 23 it finds the rotations already fused.
#include <cstring>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "xexp/patterns/analysis/rotary_cache.hpp"
#include "xexp/patterns/onnx/shape_based_identity.hpp"
#include "xexp/patterns/shape_values.hpp"

namespace xexp::patterns {

namespace detail {

// [first, last) of x's last axis held by `part`: a Slice of x on that axis (slice_piece), or an output of
// a Split of x on that axis. nullopt for anything else.
inline std::optional<std::pair<int64_t, int64_t>> last_axis_part(const ValueView& part, const ValueView& x) {
  const ir::Value& v = part.value();
  if (v.producer == ir::kNone || !x.shape() || x.shape()->empty() || !x.shape()->back().is_static())
    return std::nullopt;
  const ir::Graph& g = *part.graph;
  const ir::Node& n = g.node(v.producer);
  if (!n.domain.empty() || n.inputs.empty() || n.inputs[0] != x.id) return std::nullopt;
  const int64_t size = x.shape()->back().value(), rank = static_cast<int64_t>(x.shape()->size());
  if (n.op_type == Symbol("Slice")) {
    const std::optional<SlicePiece> piece = slice_piece(g, v.producer, rank, size, rank - 1);
    if (!piece) return std::nullopt;
    return std::pair{piece->start, piece->start + piece->count};
  }
  if (n.op_type != Symbol("Split")) return std::nullopt;
  const int64_t axis = int_attribute(n, "axis", 0);
  if (axis != -1 && axis != rank - 1) return std::nullopt;
  std::optional<std::vector<int64_t>> sizes =
      ints_attribute_or_input(g, n, "split", 1, std::vector<int64_t>{});
  if (!sizes) return std::nullopt;  // sizes computed when the model runs
  if (sizes->empty()) {             // equal parts
    const auto parts = static_cast<int64_t>(n.outputs.size());
    if (size % parts != 0) return std::nullopt;
    sizes = std::vector<int64_t>(n.outputs.size(), size / parts);
  }
  if (sizes->size() != n.outputs.size()) return std::nullopt;
  int64_t first = 0;
  for (std::size_t k = 0; k < v.output_index; ++k) first += (*sizes)[k];
  return std::pair{first, first + (*sizes)[v.output_index]};
}

// x is (batch, heads, seq, head_size) with an even head_size, `first` and `second` its two halves.
inline constexpr auto is_rotate_half =
    rewrite::fact<"is_rotate_half">([](const ValueView& x, const ValueView& first, const ValueView& second) {
      if (!x.shape() || x.shape()->size() != 4 || !x.shape()->back().is_static()) return false;
      const int64_t size = x.shape()->back().value();
      if (size == 0 || size % 2 != 0) return false;
      return last_axis_part(first, x) == std::pair<int64_t, int64_t>{0, size / 2} &&
             last_axis_part(second, x) == std::pair<int64_t, int64_t>{size / 2, size};
    });

// cos or sin read as a cache for x (analysis::rotary_cache), kept by the rule: its conditions and its
// replacement read the same analysis.
inline constexpr auto rotary_cache_of = rewrite::fact<"rotary_cache_of">(analysis::rotary_cache);

// The cache input of RotaryEmbedding: the first halves of the table rows, or the computed rows.
inline ir::ValueId build_cache(rewrite::Rewriter& r, const analysis::RotaryCache& c, int64_t head_size) {
  if (c.angles == ir::kNone) return r.initializer(analysis::first_halves(c.rows));
  ir::ValueId rows = r.node(c.function, {c.angles});
  if (c.scale != ir::kNone) rows = r.node(Symbol("Mul"), {rows, c.scale});
  if (r.graph().value(c.angles).shape->size() == 2) return rows;  // (seq, half): rows already
  return r.node(Symbol("Reshape"), {rows, r.initializer(int64_tensor({-1, head_size / 2}))});
}

// cos and sin read as caches (rotary_cache_of) by the same positions.
inline constexpr auto has_rotary_caches = rewrite::fact<"has_rotary_caches">(
    [](const ValueView& x, const std::optional<analysis::RotaryCache>& c, const std::optional<analysis::RotaryCache>& s) {
      const ElemType t = x.elem();
      if (t != ElemType::Float && t != ElemType::Float16) return false;  // ONNX Runtime's CPU kernels
      return c && s && c->positions == s->positions && c->positions_batch == s->positions_batch &&
             c->rows.dims() == s->rows.dims() && c->angles == s->angles &&
             c->counted_at_run_time == s->counted_at_run_time &&
             (c->positions != ir::kNone || c->fixed_positions.dims() == s->fixed_positions.dims());
    });

// Position ids 0, 1, ..., seq - 1 on every row, as dynamic exports compute them from the input's shape:
// [Expand(]Unsqueeze(Range(0, end, 1), axes=[0])[, shape)] with the Range as long as x's sequence (x is
// (batch, heads, seq, head_size)). RotaryEmbedding reads them as the one-element offset 0, and the
// Shape -> Gather -> Range -> Unsqueeze -> Concat -> Expand chain goes away.
inline bool counts_sequence_from_zero(const ValueView& x, ir::ValueId positions) {
  const ir::Graph& g = *x.graph;
  const ir::Value& p = g.value(positions);
  if (!p.shape || p.shape->size() != 2) return false;
  ir::ValueId v = positions;
  if (const ir::Node* expand = producer_of(g, v, "Expand")) v = expand->inputs[0];
  const ir::Node* unsqueeze = producer_of(g, v, "Unsqueeze");
  if (!unsqueeze || ints_attribute_or_input(g, *unsqueeze, "axes", 1) != std::vector<int64_t>{0})
    return false;
  const ir::Node* range = producer_of(g, unsqueeze->inputs[0], "Range");
  if (!range || range->inputs.size() != 3 || scalar_constant(g, range->inputs[0]) != 0.0 ||
      scalar_constant(g, range->inputs[2]) != 1.0)
    return false;
  const ir::Value& counted = g.value(range->outputs[0]);
  using rewrite::facts::KnownDim;
  return counted.shape && counted.shape->size() == 1 &&
         KnownDim{(*counted.shape)[0]} == rewrite::facts::dim(*x.shape(), 2);
}

// Position ids 0, 1, ..., batch * seq - 1 as (batch, seq), the rows of caches computed from angles
// (batch, seq, head_size / 2): Reshape(Range(0, batch * seq, 1), Shape(angles)[:2]).
inline ir::ValueId counted_rows(rewrite::Rewriter& r, ir::ValueId angles) {
  // Shape's start and end came with opset 15: a Slice of the whole shape before.
  const ir::ValueId dims =
      r.opset() >= 15 ? r.node(Symbol("Shape"), {angles}, {ir::Attribute::make_int(Symbol("end"), 2)})
                      : r.node(Symbol("Slice"), {r.node(Symbol("Shape"), {angles}),
                                                 r.initializer(int64_tensor({0})), r.initializer(int64_tensor({2}))});
  const ir::ValueId count =
      r.node(Symbol("ReduceProd"), {dims}, {ir::Attribute::make_int(Symbol("keepdims"), 0)});
  const ir::ValueId ids = r.node(Symbol("Range"), {r.initializer(Tensor::scalar<int64_t>(0)), count,
                                                   r.initializer(Tensor::scalar<int64_t>(1))});
  return r.node(Symbol("Reshape"), {ids, dims});
}

// The position ids of RotaryEmbedding for x: the ids cos and sin were gathered by (expanded to a static
// batch when shared by it), one row per (batch, position) counted when the model runs, or constant. With
// `offset`, ids counting 0 to seq - 1 become the one-element offset 0 (com.microsoft's op reads that form);
// without, a constant offset becomes (batch, seq) ids, for a static batch and sequence only (ONNX's op
// reads no offset): nullopt otherwise.
inline std::optional<ir::ValueId> rotary_positions(rewrite::Rewriter& r, const ValueView& x,
                                                   const analysis::RotaryCache& c, bool offset) {
  if (c.positions != ir::kNone) {
    if (offset && counts_sequence_from_zero(x, c.positions)) return r.initializer(int64_tensor({0}));
    if (c.positions_batch == 0) return c.positions;
    return r.node(Symbol("Expand"), {c.positions, r.initializer(int64_tensor({c.positions_batch, 1}))});
  }
  if (c.counted_at_run_time) return counted_rows(r, c.angles);
  if (offset || c.fixed_positions.rank() == 2) return r.initializer(c.fixed_positions);
  const Shape& xs = *x.shape();
  if (!xs[0].is_static() || !xs[2].is_static()) return std::nullopt;
  const int64_t batch = xs[0].value(), seq = xs[2].value(), start = eval::as_int64s(c.fixed_positions).at(0);
  std::vector<int64_t> ids;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t s = 0; s < seq; ++s) ids.push_back(start + s);
  return r.initializer(Tensor::from<int64_t>({batch, seq}, ids));
}

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

// The rule `name`: the rotate-half form, where `fits(x, cos cache)` holds, replaced by `build`'s
// RotaryEmbedding. The caches of cos and sin are analysed once per match: kept for the conditions and
// `build`.
template <class Fits, class Build>
rewrite::RulePtr rotate_half_rule(const char* name, Fits fits, Build build) {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'c'> cos;
  Var<'s'> sin;
  Var<'f'> first;
  Var<'S'> second;
  Int<'a'> axis;
  auto rotated = Concat(Neg(second), first, attr<"axis"> = axis);
  auto cos_cache = keep<'C'>(rotary_cache_of(cos, x));
  auto sin_cache = keep<'S'>(rotary_cache_of(sin, x));
  // replace_with: the caches and position ids are built by kind of cache, more than choose can say.
  return rule(name)
      .priority(1)
      .match(commutative(Add(commutative(Mul(x, cos)), commutative(Mul(rotated, sin)))))
      .when(fits(x, cos_cache) && is_rotate_half(x, first, second) && is_last_axis(axis, x) &&
            has_rotary_caches(x, cos_cache, sin_cache))
      .to(replace_with("rotary_embedding", build, x, cos_cache, sin_cache));
}

}  // namespace detail

inline rewrite::RulePtr rotary_embedding_rule() {
  return detail::rotate_half_rule(
      "RotaryEmbedding",
      [](auto x, auto cos_cache) {
        return rewrite::opset_at_least(23) && detail::has_onnx_positions(x, cos_cache);
      },
      detail::build_onnx_rotary);
}

}  // namespace xexp::patterns
