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
// one row per (batch, position). Without the Unsqueeze, angles (seq, head_size / 2) are broadcast over
// the batch and heads: rows read from offset 0. The Mul by x broadcasts the batch and sequence of cos
// against x's: they are x's where both are symbols (broadcast_pairs).
inline std::optional<RotaryCache> computed_rotary_cache(const ValueView& c, const ValueView& x) {
  const ir::Graph& g = *c.graph;
  const ir::Node* unsqueeze = producer_of(g, c.id, "Unsqueeze");
  if (unsqueeze && ints_attribute_or_input(g, *unsqueeze, "axes", 1) != std::vector<int64_t>{1})
    return std::nullopt;
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
  const std::size_t rank = unsqueeze ? 3 : 2;  // (batch, seq, half) or (seq, half)
  if (!angles.shape || angles.shape->size() != rank || !broadcast_pairs((*angles.shape)[rank - 2], xs[2]) ||
      !(KnownDim{(*angles.shape)[rank - 1]} == xs[3].value() / 2) || angles.elem != x.elem())
    return std::nullopt;
  const ir::Attribute* axis = concat->attribute(Symbol("axis"));
  if (!axis || (axis->i != -1 && axis->i != static_cast<int64_t>(rank) - 1)) return std::nullopt;
  RotaryCache out{Tensor(), ir::kNone, 0, int64_tensor({0}), concat->inputs[0], function->op_type, scale};
  if (!unsqueeze) return out;
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
inline constexpr auto rotary_cache_of = rewrite::fact<"rotary_cache_of">(rotary_cache);

// The cache input of RotaryEmbedding: the first halves of the table rows, or the computed rows.
inline ir::ValueId build_cache(rewrite::Rewriter& r, const RotaryCache& c, int64_t head_size) {
  if (c.angles == ir::kNone) return r.initializer(first_halves(c.rows));
  ir::ValueId rows = r.node(c.function, {c.angles});
  if (c.scale != ir::kNone) rows = r.node(Symbol("Mul"), {rows, c.scale});
  if (r.graph().value(c.angles).shape->size() == 2) return rows;  // (seq, half): rows already
  return r.node(Symbol("Reshape"), {rows, r.initializer(int64_tensor({-1, head_size / 2}))});
}

// cos and sin read as caches (rotary_cache_of) by the same positions.
inline constexpr auto has_rotary_caches = rewrite::fact<"has_rotary_caches">(
    [](const ValueView& x, const std::optional<RotaryCache>& c, const std::optional<RotaryCache>& s) {
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
                                                   const RotaryCache& c, bool offset) {
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
    rewrite::fact<"has_onnx_positions">([](const ValueView& x, const std::optional<RotaryCache>& c) {
      if (!c) return false;  // x is (batch, heads, seq, head_size) where there is a cache
      const Shape& xs = *x.shape();
      return c && (c->positions != ir::kNone || c->counted_at_run_time || c->fixed_positions.rank() == 2 ||
                   (xs[0].is_static() && xs[2].is_static()));
    });

inline std::optional<ir::ValueId> build_onnx_rotary(rewrite::Rewriter& r, const ValueView& x,
                                                    const std::optional<RotaryCache>& c,
                                                    const std::optional<RotaryCache>& s) {
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
