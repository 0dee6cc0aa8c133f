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

namespace concat {
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
  const std::vector<ir::NodeId> readers = sibling_readers(g, root_id, [&](ir::NodeId id) {
    std::optional<SlicePiece> piece = slice_piece(g, id, rank, dim, axis);
    if (piece) out.pieces.push_back(*piece);
    return piece.has_value();
  });
  if (readers.empty()) return {};
  std::sort(out.pieces.begin(), out.pieces.end(),
            [](const SlicePiece& a, const SlicePiece& b) { return a.start < b.start; });
  int64_t next = 0;
  for (const SlicePiece& p : out.pieces) {
    if (p.start != next || p.count <= 0) return {};
    next += p.count;
  }
  if (next != dim) return {};
  return out;
}
inline constexpr auto slices_of = rewrite::fact<"slices_of">(tiling_slices);
inline constexpr auto tiles_the_axis =
    rewrite::fact<"tiles_the_axis">([](const Tiling& tiling) { return !tiling.pieces.empty(); });

inline std::optional<ir::ValueId> split_into_pieces(rewrite::Rewriter& r, const ValueView& root,
                                                    const Tiling& tiling) {
  const ir::NodeId root_id = root.value().producer;
  const ir::ValueId x = r.graph().node(root_id).inputs[0];
  std::vector<int64_t> sizes;
  for (const SlicePiece& p : tiling.pieces) sizes.push_back(p.count);
  const ir::ValueId first = r.node(Symbol("Split"), {x},
                                   {ir::Attribute::make_int(Symbol("axis"), tiling.axis),
                                    ir::Attribute::make_ints(Symbol("split"), sizes)},
                                   {}, tiling.pieces.size());
  const std::vector<ir::ValueId> outs = r.graph().node(r.graph().value(first).producer).outputs;
  std::vector<ir::NodeId> readers;
  for (const SlicePiece& p : tiling.pieces) readers.push_back(p.node);
  return replace_readers(r, root_id, readers, outs);
}
}  // namespace concat

inline rewrite::RulePtr slices_split_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  auto root = named<'r'>(Slice(x, etc));
  auto slices = keep<'t'>(concat::slices_of(root));
  // replace_with: the Split's outputs replace the other Slices too, a list the DSL cannot replace.
  return rule("SlicesSplit")
      .priority(1)
      .match(root)
      .when(opset_at_least(10) && concat::tiles_the_axis(slices))
      .to(replace_with("split", concat::split_into_pieces, root, slices));
}

}  // namespace xexp::patterns
