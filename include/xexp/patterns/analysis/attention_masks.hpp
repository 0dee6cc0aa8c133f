#pragma once
// What a mask on attention scores amounts to (patterns/onnx/attention.hpp): the additive bias a
// constant Add or Where folds to, a causal table cut at run time, whether a bias hides exactly the
// later keys (is_causal), a mask with one row for all queries (key padding).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "xexp/patterns/computed_constant.hpp"
#include "xexp/patterns/facts.hpp"
#include "xexp/patterns/shape_values.hpp"

namespace xexp::patterns::analysis {

// The additive attention_bias, (batch|1, heads|1, sequence, total), that the mask of the scores s
// amounts to in masked (an Add or a Where whose inputs the rule checked constant), or nullopt when there
// is none: a mask that does not fold, a fill above -1e4, a fully masked row, unknown sizes. With
// `computed`, a mask computed from constants alone (computed_constant) is read too: for facts that read
// it without writing it, as a causal mask is dropped, not stored.
inline std::optional<Tensor> folded_bias(const ValueView& masked, const ValueView& s, bool computed = false) {
  const ir::Graph& g = *s.graph;
  const ir::Node& n = node_of(masked);
  if (!s.shape() || !masked.shape() || !rewrite::facts::same_shape(*s.shape(), *masked.shape()))
    return std::nullopt;
  const std::size_t rank = s.shape()->size();
  if ((rank != 3 && rank != 4) || static_dim(s, -2 + static_cast<int64_t>(rank)) <= 0 ||
      static_dim(s, -1 + static_cast<int64_t>(rank)) <= 0)
    return std::nullopt;
  auto read = [&](ir::ValueId v) -> std::optional<Tensor> {
    if (const Tensor* t = rewrite::constant_tensor(g, v)) return *t;
    return computed ? computed_constant(g, v) : std::nullopt;
  };
  Tensor bias;
  if (has_op(n, "Add")) {
    const std::optional<Tensor> m = read(n.inputs[0] == s.id ? n.inputs[1] : n.inputs[0]);
    if (!m || m->type() != s.elem()) return std::nullopt;
    bias = *m;
  } else {
    const std::optional<Tensor> condition = read(n.inputs[0]);
    const bool keeps_where_true = n.inputs[1] == s.id;
    const std::optional<double> fill = scalar_constant(g, n.inputs[keeps_where_true ? 2 : 1]);
    if (!condition || condition->type() != ElemType::Bool || !fill || *fill > -1e4) return std::nullopt;
    const Tensor zero = eval::filled(s.elem(), {}, 0.0), filler = eval::filled(s.elem(), {}, *fill);
    bias = compute("Where", {*condition, keeps_where_true ? zero : filler, keeps_where_true ? filler : zero});
  }
  if (bias.rank() > rank) return std::nullopt;
  // Left-padded to the scores' rank, broadcast over (sequence, total); the leading axes are 1 or the
  // scores' (the Add or the Where gives the scores' shape).
  std::vector<int64_t> padded(rank - bias.rank(), 1);
  padded.insert(padded.end(), bias.dims().begin(), bias.dims().end());
  std::vector<int64_t> dims = padded;
  dims[rank - 2] = static_dim(s, static_cast<int64_t>(rank) - 2);
  dims[rank - 1] = static_dim(s, static_cast<int64_t>(rank) - 1);
  bias = eval::expand_to(bias.reshaped(padded), dims);
  if (!has_op(n, "Add")) {
    const int64_t total = dims.back();
    for (int64_t row = 0; row < bias.size(); row += total) {
      bool kept = false;
      for (int64_t k = row; k < row + total && !kept; ++k) kept = eval::element_as_double(bias, k) == 0;
      if (!kept) return std::nullopt;
    }
  }
  if (rank == 3) bias = bias.reshaped({dims[0], 1, dims[1], dims[2]});
  return bias;
}

// The constant table a mask v of rank mask_rank is cut from, Slice(Slice(table, 0..seq, rows), 0..seq,
// columns), each of the last two axes cut once from 0 with step 1 at an end holding the scores' dim on that
// axis (or not cut, the table's dim being the scores'), the table longer than 1 where it is cut.
inline std::optional<Tensor> cut_table(const ir::Graph& g, ir::ValueId v, const ValueView& s,
                                       int64_t mask_rank) {
  std::optional<ir::ValueId> ends[2];  // where the rows and the columns are cut
  const Tensor* cut = nullptr;
  for (int cuts = 0; !(cut = rewrite::constant_tensor(g, v)); ++cuts) {
    const ir::Node* slice = producer_of(g, v, "Slice");
    const std::optional<AxisCut> c = slice ? axis_cut(g, *slice) : std::nullopt;
    if (!c || cuts == 2 || c->start != 0 || c->step != 1) return std::nullopt;
    const int64_t axis = c->axis < 0 ? c->axis : c->axis - mask_rank;  // -2 rows, -1 columns
    if ((axis != -2 && axis != -1) || ends[axis + 2]) return std::nullopt;
    ends[axis + 2] = c->end;
    v = slice->inputs[0];
  }
  if (static_cast<int64_t>(cut->rank()) != mask_rank) return std::nullopt;
  for (int64_t axis : {-2, -1}) {
    const int64_t length = cut->dims()[cut->dims().size() + static_cast<std::size_t>(axis)];
    if (!ends[axis + 2]) {
      if (!(dim_of(s, axis) == length)) return std::nullopt;
      continue;
    }
    const std::optional<Shape> end = shape_value(g, *ends[axis + 2]);
    if (length <= 1 || !end || end->size() != 1 || !(KnownDim{(*end)[0]} == dim_of(s, axis)))
      return std::nullopt;
  }
  return *cut;
}

// A triangle computed at run time from the sequence length, as torch.triu(torch.full((s, s), fill), 1)
// and torch.ones(s, s, dtype=torch.bool).tril() export: Trilu(ConstantOfShape(shape), k), the shape
// (1, ..., sequence, total) holding the scores' last two dims. Trilu keeps or zeroes (i, j) by j - i
// against k alone: the same Trilu of |k| + 2 rows, which holds every diagonal it tells apart, is what the
// mask holds at any sequence length, read as a table the mask is the leading square of.
inline std::optional<Tensor> triangle_table(const ir::Graph& g, ir::ValueId v, const ValueView& s,
                                            int64_t mask_rank) {
  constexpr int64_t kMaxDiagonal = 1 << 10;  // a wider offset is no mask an exporter writes
  const ir::Node* trilu = producer_of(g, v, "Trilu");
  const ir::Node* fill = trilu ? producer_of(g, trilu->inputs[0], "ConstantOfShape") : nullptr;
  if (!fill) return std::nullopt;
  const bool has_k = trilu->inputs.size() > 1 && trilu->inputs[1] != ir::kNone;
  const std::optional<double> k = has_k ? scalar_constant(g, trilu->inputs[1]) : std::optional<double>(0.0);
  const std::optional<Shape> shape = shape_value(g, fill->inputs[0]);
  const ValueView filled{&g, fill->outputs[0]};
  if (!k || std::abs(*k) > kMaxDiagonal || !shape || static_cast<int64_t>(shape->size()) != mask_rank ||
      !fills_one_value.f(filled) || !(KnownDim{(*shape)[shape->size() - 2]} == dim_of(s, -2)) ||
      !(KnownDim{(*shape)[shape->size() - 1]} == dim_of(s, -1)) ||
      std::any_of(shape->begin(), shape->end() - 2, [](const Dim& d) { return !(d == Dim(1)); }))
    return std::nullopt;
  const auto n = static_cast<int64_t>(std::abs(*k)) + 2;
  std::vector<int64_t> dims(static_cast<std::size_t>(mask_rank), 1);
  const Tensor one = fill_scalar.f(filled).reshaped(dims);
  dims[dims.size() - 2] = dims.back() = n;
  std::vector<ir::Attribute> upper;
  if (const ir::Attribute* a = trilu->attribute(Symbol("upper"))) upper.push_back(*a);
  return compute("Trilu", {eval::expand_to(one, dims), Tensor::scalar<int64_t>(static_cast<int64_t>(*k))},
                 upper);
}

// Where(mask, scores, fill) (or Where(mask, fill, scores)) with a mask computed at run time as dynamic
// exports write causal masks: Slice(Slice(table, 0..seq, rows), 0..seq, columns) of a constant table
// (1, ..., rows, columns) (cut_table) or a triangle of the sequence length (triangle_table), possibly
// compared to a constant after (Equal(cut, 0)), possibly given leading axes after (Unsqueeze(cut, [0, 1])).
// The attention_bias is then Where(mask, 0, fill) (or Where(mask, fill, 0)) with a zero of shape
// (1, 1, 1, 1), so that the bias is 4-D for 3-D scores too. Exact when:
// - each of the last two axes is cut once from 0 with step 1 at an end holding the scores' dim on that
//   axis (or not cut, the table's dim being the scores'), the table longer than 1 there: the cut is then
//   min(dim, rows), which the original broadcasts against the scores only when it is the dim itself, so
//   the bias is (1, 1, sequence, total) whenever the original runs;
// - the scores are square (sequence and total the same dim) and each row i of the table keeps some column
//   j <= i: every row of a leading square cut keeps a score, so no row is fully masked (Where gives such
//   a row uniform weights, the sum does not);
// - the fill is -1e4 or less (masked weights are 0 either way).
// Add(scores, cut) of an additive table (of the scores' type) cut the same way is the bias itself, made
// 4-D (bias_4d); a row the table hides whole gives NaN with or without the fusion.
// The constant table such a mask is cut from when it fits, else nullopt.
inline std::optional<Tensor> runtime_mask_table(const ValueView& masked, const ValueView& s) {
  const ir::Graph& g = *s.graph;
  const ir::Node& n = node_of(masked);
  if (!s.shape() || !masked.shape() || !rewrite::facts::same_shape(*s.shape(), *masked.shape()))
    return std::nullopt;
  const auto rank = static_cast<int64_t>(s.shape()->size());
  if ((rank != 3 && rank != 4) || !(dim_of(s, -2) == dim_of(s, -1))) return std::nullopt;
  const bool added = has_op(n, "Add"), keeps_where_true = n.inputs[1] == s.id;
  if (!added) {
    const std::optional<double> fill = scalar_constant(g, n.inputs[keeps_where_true ? 2 : 1]);
    if (!fill || *fill > -1e4 || g.value(n.inputs[0]).elem != ElemType::Bool) return std::nullopt;
  }
  // The mask: the Add's other input, the Where's condition; a 2-D cut given its leading axes by an
  // Unsqueeze (Llama's causal_mask[None, None, :s, :s]) broadcasts as the cut itself.
  ir::ValueId v = added && n.inputs[0] == s.id ? n.inputs[1] : n.inputs[0];
  if (const ir::Node* unsqueeze = producer_of(g, v, "Unsqueeze")) {
    const std::optional<std::vector<int64_t>> axes = unsqueezed_axes(g, *unsqueeze);
    if (axes && are_leading_axes(*axes)) v = unsqueeze->inputs[0];
  }
  const Tensor* compared_to = nullptr;  // the mask is Equal(cut, compared_to)
  if (const ir::Node* equal = producer_of(g, v, "Equal"); equal && equal->inputs.size() == 2) {
    compared_to = rewrite::constant_tensor(g, equal->inputs[1]);
    if (!compared_to || compared_to->size() != 1) return std::nullopt;
    v = equal->inputs[0];
  }
  const auto mask_rank = static_cast<int64_t>(g.value(v).shape ? g.value(v).shape->size() : 0);
  if (mask_rank < 2 || mask_rank > rank) return std::nullopt;
  std::optional<Tensor> found = triangle_table(g, v, s, mask_rank);
  if (!found) found = cut_table(g, v, s, mask_rank);
  if (!found) return std::nullopt;
  const Tensor table = compared_to ? compute("Equal", {*found, *compared_to}) : *std::move(found);
  if (table.type() != (added ? s.elem() : ElemType::Bool) || static_cast<int64_t>(table.rank()) != mask_rank)
    return std::nullopt;
  const std::vector<int64_t>& dims = table.dims();
  if (std::any_of(dims.begin(), dims.end() - 2, [](int64_t d) { return d != 1; })) return std::nullopt;
  const int64_t rows = dims[dims.size() - 2], columns = dims.back();
  for (int64_t row = 0; row < rows && !added; ++row) {
    bool kept = false;
    for (int64_t column = 0; column <= std::min(row, columns - 1) && !kept; ++column)
      kept = (eval::element_as_double(table, row * columns + column) != 0) == keeps_where_true;
    if (!kept) return std::nullopt;
  }
  return table;
}
// A 4-D bias (batch, heads, n, n) hides exactly the keys after each query, the same way in every batch and
// head: 0 where key j <= query i, -1e4 or less after (exp underflows as for -inf).
inline bool hides_later_keys(const Tensor& bias) {
  if (bias.rank() != 4 || bias.dims()[2] != bias.dims()[3]) return false;
  const auto n = static_cast<std::size_t>(bias.dims()[3]);
  const Tensor values = eval::cast_tensor(bias, ElemType::Float);  // read once, typed (float: no copy)
  const std::span<const float> x = values.data<float>();
  for (std::size_t start = 0, row = 0; start < x.size(); start += n, row = (row + 1) % n)
    for (std::size_t column = 0; column < n; ++column)
      if (column <= row ? x[start + column] != 0 : x[start + column] > -1e4f) return false;
  return true;
}
// The leading square of a table a mask is cut from (runtime_mask_table), where any cut of it lies, hides
// exactly the later keys: an additive table (`added`) of 0 and -1e4 or less, or a bool one read by a
// Where that keeps the scores where it is true (`keeps_where_true`) or false.
inline bool cut_hides_later_keys(const Tensor& table, bool added, bool keeps_where_true) {
  const int64_t columns = table.dims().back(), n = std::min(table.dims()[table.rank() - 2], columns);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const double x = eval::element_as_double(table, i * columns + j);
      const bool kept = added ? x == 0 : (x != 0) == keeps_where_true, hidden = added ? x <= -1e4 : !kept;
      if (j <= i ? !kept : !hidden) return false;
    }
  return true;
}
// A mask with one row for all queries, (batch|1, heads|1, 1, total) as BERT computes it from its
// attention_mask, hides keys, not (query, key) pairs; the fused nodes want a row per query, so the
// scores' sequence must be static.
inline bool one_row_for_all_queries(const ValueView& x, const ValueView& s) {
  return x.shape() && (x.shape()->size() < 2 || dim_of(x, -2) == 1) && static_dim(s, -2) > 1;
}

}  // namespace xexp::patterns::analysis
