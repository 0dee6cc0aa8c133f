#pragma once
// An analysis of the rotary rules (patterns/onnx/rotary_embedding.hpp): where the cos and sin a rotation
// multiplies by come from, as the caches ONNX's and ONNX Runtime's RotaryEmbedding read (see that
// header's comment for the spellings of Llama-like exports).
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "xexp/patterns/facts.hpp"
#include "xexp/patterns/shape_values.hpp"

namespace xexp::patterns::analysis {

// Where a cos (or sin) value comes from, and the row of each (batch, seq) position in it, a graph value or
// a constant. Either rows of a constant table (rows, head_size) whose halves are equal, or computed:
// `function`(angles) [* scale], angles ([batch or 1,] seq, head_size / 2) repeated on both halves.
struct RotaryCache {
  Tensor rows;
  ir::ValueId positions = ir::kNone;
  int64_t positions_batch = 0;  // > 0: positions has a batch of 1, expanded to this static batch
  Tensor fixed_positions;       // when positions is kNone
  ir::ValueId angles = ir::kNone;
  Symbol function = {};
  ir::ValueId scale = ir::kNone;
  bool counted_at_run_time = false;  // row b * seq + s for position (b, s) of angles with a dynamic batch
};

// The two halves of every row of `rows` (rows, size) are equal, bit for bit (a table of a large model
// has millions of values: compared as bytes, the check stays cheap).
inline bool halves_equal(const Tensor& rows) {
  const std::size_t half = static_cast<std::size_t>(rows.dims()[1] / 2) * elem_size(rows.type());
  const std::span<const std::byte> bytes = rows.bytes();
  for (std::size_t row = 0; row < bytes.size(); row += 2 * half)
    if (std::memcmp(bytes.data() + row, bytes.data() + row + half, half) != 0) return false;
  return true;
}
// What RotaryEmbedding reads: the first half of every row.
inline Tensor first_halves(const Tensor& rows) {
  return compute("Slice", {rows, int64_tensor({0}), int64_tensor({rows.dims()[1] / 2}), int64_tensor({1})});
}

// cos or sin as a constant (..., rows, head_size): a leading dimension other than 1 must be the batch.
inline std::optional<RotaryCache> constant_rotary_cache(const Tensor& t, const ValueView& x) {
  const Shape& xs = *x.shape();
  const rewrite::facts::KnownDim batch{xs[0]}, seq{xs[2]};
  const std::vector<int64_t>& d = t.dims();
  const int64_t size = xs[3].value();
  if (d.size() < 2 || d.size() > 4 || d.back() != size) return std::nullopt;
  const int64_t rows = d[d.size() - 2];
  int64_t groups = 1;
  for (std::size_t k = 0; k + 2 < d.size(); ++k) {
    if (k == 0 && d.size() == 4)
      groups = d[0];
    else if (d[k] != 1)
      return std::nullopt;
  }
  // One row per position: a single row broadcast over a longer sequence is no table lookup.
  if (!(seq == rows) && !(xs[2].is_symbolic() && rows > 1)) return std::nullopt;
  if (groups > 1 && !(batch == groups)) return std::nullopt;
  const Tensor all = t.reshaped({groups * rows, size});
  if (!halves_equal(all)) return std::nullopt;
  const std::span<const std::byte> bytes = all.bytes();
  const std::size_t group = bytes.size() / static_cast<std::size_t>(groups);
  bool same_groups = true;
  for (std::size_t first = group; first < bytes.size() && same_groups; first += group)
    same_groups = std::memcmp(bytes.data(), bytes.data() + first, group) == 0;
  if (same_groups)
    return RotaryCache{compute("Slice", {all, int64_tensor({0}), int64_tensor({rows}), int64_tensor({0})}),
                       ir::kNone, 0, int64_tensor({0})};
  if (!(seq == rows)) return std::nullopt;
  const std::vector<int64_t> ids = eval::iota_map(groups * rows);
  return RotaryCache{all, ir::kNone, 0, Tensor::from<int64_t>({groups, rows}, ids)};
}

// cos or sin gathered from a constant table by position ids: Unsqueeze(Gather(table, ids), axes=[1]).
inline std::optional<RotaryCache> gathered_rotary_cache(const ValueView& c, const ValueView& x) {
  const ir::Graph& g = *c.graph;
  const ir::Node* unsqueeze = producer_of(g, c.id, "Unsqueeze");
  if (!unsqueeze || ints_attribute_or_input(g, *unsqueeze, "axes", 1) != std::vector<int64_t>{1})
    return std::nullopt;
  const ir::Node* gather = producer_of(g, unsqueeze->inputs[0], "Gather");
  if (!gather || gather->inputs.size() != 2) return std::nullopt;
  const ir::Attribute* axis = gather->attribute(Symbol("axis"));
  if (axis && axis->i != 0) return std::nullopt;
  const ir::Value& ids = g.value(gather->inputs[1]);
  const Shape& xs = *x.shape();
  using rewrite::facts::KnownDim;
  if (ids.elem != ElemType::Int64 || !ids.shape || ids.shape->size() != 2 ||
      !(KnownDim{(*ids.shape)[1]} == KnownDim{xs[2]}))
    return std::nullopt;
  // ONNX Runtime wants (batch, seq) position ids: ids shared by a static batch are expanded to it.
  int64_t positions_batch = 0;
  if (!(KnownDim{(*ids.shape)[0]} == KnownDim{xs[0]})) {
    if (!((*ids.shape)[0] == Dim(1)) || !xs[0].is_static()) return std::nullopt;
    positions_batch = xs[0].value();
  }
  ir::ValueId table = gather->inputs[0];
  if (const ir::Node* slice = producer_of(g, table, "Slice")) {  // rows [0, end) of the table
    if (slice->inputs.size() < 4) return std::nullopt;
    if (int_constant(g, slice->inputs[1]) != std::vector<int64_t>{0} ||
        int_constant(g, slice->inputs[3]) != std::vector<int64_t>{0} || !unit_steps.f(ValueView{&g, table}))
      return std::nullopt;
    table = slice->inputs[0];
  }
  const Tensor* t = rewrite::constant_tensor(g, table);
  const int64_t size = xs[3].value();
  if (!t || t->rank() != 2 || t->dims()[1] != size || !halves_equal(*t)) return std::nullopt;
  return RotaryCache{*t, gather->inputs[1], positions_batch, Tensor()};
}

// cos or sin cut at run time from row 0 of a constant table (rows, head_size) to x's sequence length:
// Unsqueeze(Slice(table, 0, seq, axes=[0]), axes=[0, 1]). The table must have more than one row: a cut of
// one row would broadcast over the sequence, the same row for every position.
inline std::optional<RotaryCache> cut_rotary_cache(const ValueView& c, const ValueView& x) {
  const ir::Graph& g = *c.graph;
  const ir::Node* unsqueeze = producer_of(g, c.id, "Unsqueeze");
  const ir::Node* slice = unsqueeze ? producer_of(g, unsqueeze->inputs[0], "Slice") : nullptr;
  const std::optional<AxisCut> cut = slice ? axis_cut(g, *slice) : std::nullopt;
  if (!cut || cut->start != 0 || cut->step != 1 || (cut->axis != 0 && cut->axis != -2) ||
      ints_attribute_or_input(g, *unsqueeze, "axes", 1) != std::vector<int64_t>{0, 1})
    return std::nullopt;
  const Tensor* table = rewrite::constant_tensor(g, slice->inputs[0]);
  const std::optional<Shape> end = shape_value(g, cut->end);
  const Shape& xs = *x.shape();
  using rewrite::facts::KnownDim;
  if (!table || table->rank() != 2 || table->dims()[0] <= 1 || table->dims()[1] != xs[3].value() || !end ||
      end->size() != 1 || !(KnownDim{(*end)[0]} == KnownDim{xs[2]}) || !halves_equal(*table))
    return std::nullopt;
  return RotaryCache{*table, ir::kNone, 0, int64_tensor({0})};
}

// cos or sin computed from angles (exports of newer Llama and Phi code):
// Unsqueeze(Cos(Concat(angles, angles, axis=-1)) [* scalar constant], axes=[1]), Sin alike. The angles
// of one batch (1, seq, head_size / 2) are rows read from offset 0; those of a static or dynamic batch,
// one row per (batch, position). Without the Unsqueeze, or with one of axes [0, 1] (emb.cos()[None,
// None]), angles (seq, head_size / 2) are broadcast over the batch and heads: rows read from offset 0. The
// Mul by x broadcasts the batch and sequence of cos against x's: they are x's where both are symbols
// (broadcast_pairs).
inline std::optional<RotaryCache> computed_rotary_cache(const ValueView& c, const ValueView& x) {
  const ir::Graph& g = *c.graph;
  const ir::Node* unsqueeze = producer_of(g, c.id, "Unsqueeze");
  const std::optional<std::vector<int64_t>> axes =
      unsqueeze ? ints_attribute_or_input(g, *unsqueeze, "axes", 1) : std::nullopt;
  const bool per_batch = axes == std::vector<int64_t>{1}, broadcast = axes == std::vector<int64_t>{0, 1};
  if (unsqueeze && !per_batch && !broadcast) return std::nullopt;
  ir::ValueId value = unsqueeze ? unsqueeze->inputs[0] : c.id, scale = ir::kNone;
  if (const ir::Node* mul = producer_of(g, value, "Mul"); mul && mul->inputs.size() == 2) {
    for (int k : {0, 1}) {
      const Tensor* t = rewrite::constant_tensor(g, mul->inputs[k]);
      if (t && t->size() == 1 && t->type() == x.elem()) {
        scale = mul->inputs[k];
        value = mul->inputs[1 - k];
      }
    }
    if (scale == ir::kNone) return std::nullopt;
  }
  const ir::Node* function = producer_of(g, value, "Cos");
  if (!function) function = producer_of(g, value, "Sin");
  if (!function) return std::nullopt;
  const ir::Node* concat = producer_of(g, function->inputs[0], "Concat");
  if (!concat || concat->inputs.size() != 2 || concat->inputs[0] != concat->inputs[1]) return std::nullopt;
  const ir::Value& angles = g.value(concat->inputs[0]);
  const Shape& xs = *x.shape();
  using rewrite::facts::KnownDim;
  const std::size_t rank = per_batch ? 3 : 2;  // (batch, seq, half) or (seq, half)
  if (!angles.shape || angles.shape->size() != rank || !broadcast_pairs((*angles.shape)[rank - 2], xs[2]) ||
      !(KnownDim{(*angles.shape)[rank - 1]} == xs[3].value() / 2) || angles.elem != x.elem())
    return std::nullopt;
  const ir::Attribute* axis = concat->attribute(Symbol("axis"));
  if (!axis || (axis->i != -1 && axis->i != static_cast<int64_t>(rank) - 1)) return std::nullopt;
  RotaryCache out{Tensor(), ir::kNone, 0, int64_tensor({0}), concat->inputs[0], function->op_type, scale};
  if (!per_batch) return out;
  const Dim batch = (*angles.shape)[0];
  if (batch == Dim(1)) return out;
  if (batch.is_symbolic() && broadcast_pairs(batch, xs[0])) {
    out.fixed_positions = Tensor();
    out.counted_at_run_time = true;
    return out;
  }
  if (!batch.is_static() || !xs[0].is_static() || batch.value() != xs[0].value() || !xs[2].is_static())
    return std::nullopt;
  out.fixed_positions =
      Tensor::from<int64_t>({batch.value(), xs[2].value()}, eval::iota_map(batch.value() * xs[2].value()));
  return out;
}

// cos or sin read as a cache for x (batch, heads, seq, head_size), where they are either kind above. Kept
// by the rule: its conditions and its replacement read the same analysis.
inline std::optional<RotaryCache> rotary_cache(const ValueView& c, const ValueView& x) {
  if (!x.shape() || x.shape()->size() != 4 || !x.shape()->back().is_static() || c.elem() != x.elem())
    return std::nullopt;
  if (const Tensor* t = c.constant()) return constant_rotary_cache(*t, x);
  if (std::optional<RotaryCache> gathered = gathered_rotary_cache(c, x)) return gathered;
  if (std::optional<RotaryCache> cut = cut_rotary_cache(c, x)) return cut;
  return computed_rotary_cache(c, x);
}

}  // namespace xexp::patterns::analysis
