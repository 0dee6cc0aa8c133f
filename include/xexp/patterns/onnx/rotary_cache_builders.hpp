#pragma once
// What the rotary rules (onnx/rotary_embedding.hpp, ort/rotary_embedding.hpp) build from the caches cos
// and sin were read as (analysis::rotary_cache): RotaryEmbedding's cos and sin caches and its position
// ids, with or without the offset form.
#include <optional>
#include <vector>

#include "xexp/patterns/analysis/rotary_cache.hpp"

namespace xexp::patterns::rotary {

// The cache input of RotaryEmbedding: the first halves of the table rows, or the computed rows.
inline ir::ValueId build_cache(rewrite::Rewriter& r, const analysis::RotaryCache& c, int64_t head_size) {
  if (c.angles == ir::kNone) return r.initializer(analysis::first_halves(c.rows));
  ir::ValueId rows = r.node(c.function, {c.angles});
  if (c.scale != ir::kNone) rows = r.node(Symbol("Mul"), {rows, c.scale});
  if (r.graph().value(c.angles).shape->size() == 2) return rows;  // (seq, half): rows already
  return r.node(Symbol("Reshape"), {rows, r.initializer(int64_tensor({-1, head_size / 2}))});
}

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

}  // namespace xexp::patterns::rotary
