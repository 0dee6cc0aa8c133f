#pragma once
// SlicesSplit: Slices of one tensor along one axis (step 1) that cut it into consecutive pieces covering
// the whole axis (the halves of a rotary embedding, q/k/v out of a fused projection) are one Split with
// those sizes: one node instead of one per piece, and one pass over the tensor.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace detail {
// The Slices of x cutting the root's axis, sorted by start, when they tile the whole axis and the root is
// the first of them in execution order; empty otherwise.
struct Tiling {
  int64_t axis = 0;
  std::vector<SlicePiece> pieces;
};
inline Tiling tiling_slices(const ValueView& root) {
  const ir::Graph& g = *root.graph;
  const ir::NodeId root_id = root.value().producer;
  const ir::ValueId x = g.node(root_id).inputs[0];
  const std::optional<Shape>& shape = g.value(x).shape;
  if (!shape) return {};
  const auto rank = static_cast<int64_t>(shape->size());
  // The root's axis: read with a dim of 1, any axis is accepted at this point.
  const ir::Node& n = g.node(root_id);
  std::optional<std::vector<int64_t>> axes = n.inputs.size() > 3 && n.inputs[3] != ir::kNone
                                                 ? int_constant(g, n.inputs[3])
                                                 : std::vector<int64_t>{0};
  if (!axes || axes->size() != 1) return {};
  const int64_t axis = (*axes)[0] < 0 ? (*axes)[0] + rank : (*axes)[0];
  if (axis < 0 || axis >= rank || !(*shape)[axis].is_static()) return {};
  const int64_t dim = (*shape)[axis].value();
  Tiling out{axis, {}};
  std::vector<ir::NodeId> others;
  for (const ir::Use& u : g.value(x).uses) {
    if (u.slot != 0) continue;
    std::optional<SlicePiece> piece = slice_piece(g, u.node, rank, dim, axis);
    if (!piece) continue;
    if (u.node != root_id) {
      if (g.value(g.node(u.node).outputs[0]).is_graph_output()) return {};
      others.push_back(u.node);
    }
    out.pieces.push_back(*piece);
  }
  const bool root_is_a_piece = std::any_of(out.pieces.begin(), out.pieces.end(),
                                           [&](const SlicePiece& p) { return p.node == root_id; });
  if (out.pieces.size() < 2 || !root_is_a_piece) return {};
  std::sort(out.pieces.begin(), out.pieces.end(),
            [](const SlicePiece& a, const SlicePiece& b) { return a.start < b.start; });
  int64_t next = 0;
  for (const SlicePiece& p : out.pieces) {
    if (p.start != next || p.count <= 0) return {};
    next += p.count;
  }
  if (next != dim || !first_in_order(g, root_id, x, others)) return {};
  return out;
}
inline constexpr auto tiles_the_axis = rewrite::fact<"tiles_the_axis">(
    [](const ValueView& root) { return !tiling_slices(root).pieces.empty(); });

inline std::optional<ir::ValueId> split_into_pieces(rewrite::Rewriter& r, const ValueView& root) {
  const Tiling tiling = tiling_slices(root);
  if (tiling.pieces.empty()) return std::nullopt;
  const ir::NodeId root_id = root.value().producer;
  const ir::ValueId x = r.graph().node(root_id).inputs[0];
  std::vector<int64_t> sizes;
  for (const SlicePiece& p : tiling.pieces) sizes.push_back(p.count);
  const ir::ValueId first = r.node(Symbol("Split"), {x},
                                   {ir::Attribute::make_int(Symbol("axis"), tiling.axis),
                                    ir::Attribute::make_ints(Symbol("split"), sizes)},
                                   {}, tiling.pieces.size());
  const std::vector<ir::ValueId> outs = r.graph().node(r.graph().value(first).producer).outputs;
  ir::ValueId replaced = ir::kNone;
  for (std::size_t k = 0; k < tiling.pieces.size(); ++k) {
    const ir::ValueId piece = r.graph().node(tiling.pieces[k].node).outputs[0];
    if (tiling.pieces[k].node == root_id)
      replaced = outs[k];
    else
      r.replace_later(piece, outs[k]);
  }
  return replaced;
}
}  // namespace detail

inline rewrite::RulePtr slices_split_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  auto root = named<'r'>(Slice(x, etc));
  return rule("SlicesSplit")
      .priority(1)
      .match(root)
      .when(opset_at_least(10) && detail::tiles_the_axis(root))
      .to(replace_with("split", detail::split_into_pieces, root));
}

}  // namespace xexp::patterns
