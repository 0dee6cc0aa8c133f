#pragma once
// GathersSplit: Gathers of one tensor with scalar constant indices along one static axis, one per index
// 0..dim-1 (the unbind of q, k and v out of a fused projection), are one Split into pieces of 1 and a
// Squeeze of the axis on each piece: one pass over the tensor instead of one per Gather.
#include <cstdint>
#include <optional>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace concat {
// The Gathers of x along the root's axis, indexed by the element they read, when there is exactly one
// per element of that axis and the root is the first of them in execution order; empty otherwise.
struct Unbinding {
  int64_t axis = 0;
  std::vector<ir::NodeId> by_index;
};
// The element Gather node `id` reads along axis `axis` of its input (rank `rank`, `dim` elements on that
// axis): a scalar constant index, negative ones counted from the end; -1 for any other node.
inline int64_t gathered_element(const ir::Graph& g, ir::NodeId id, int64_t rank, int64_t dim, int64_t axis) {
  const ir::Node& n = g.node(id);
  if (n.op_type != Symbol("Gather") || !n.domain.empty() || n.inputs.size() != 2) return -1;
  const int64_t a = int_attribute(n, "axis", 0);
  if ((a < 0 ? a + rank : a) != axis) return -1;
  const Tensor* index = rewrite::constant_tensor(g, n.inputs[1]);
  if (!index || !index->dims().empty() || !is_integer_type(index->type())) return -1;
  const int64_t i = eval::as_int64s(*index)[0];
  const int64_t element = i < 0 ? i + dim : i;
  return element >= 0 && element < dim ? element : -1;
}
inline Unbinding unbinding_gathers(const ValueView& root) {
  const ir::Graph& g = *root.graph;
  const ir::NodeId root_id = root.value().producer;
  const ir::ValueId x = g.node(root_id).inputs[0];
  const std::optional<Shape>& shape = g.value(x).shape;
  if (!shape) return {};
  const auto rank = static_cast<int64_t>(shape->size());
  const int64_t root_axis = int_attribute(g.node(root_id), "axis", 0);
  const int64_t axis = root_axis < 0 ? root_axis + rank : root_axis;
  if (axis < 0 || axis >= rank || !(*shape)[axis].is_static() || (*shape)[axis].value() < 2) return {};
  const int64_t dim = (*shape)[axis].value();
  Unbinding out{axis, std::vector<ir::NodeId>(static_cast<std::size_t>(dim), ir::kNone)};
  bool repeated = false;  // two Gathers of one element: a Split would give it once
  const std::vector<ir::NodeId> readers = sibling_readers(g, root_id, [&](ir::NodeId id) {
    const int64_t element = gathered_element(g, id, rank, dim, axis);
    if (element < 0) return false;
    ir::NodeId& slot = out.by_index[static_cast<std::size_t>(element)];
    repeated = repeated || slot != ir::kNone;
    slot = id;
    return true;
  });
  if (readers.empty() || repeated) return {};
  for (ir::NodeId id : out.by_index)
    if (id == ir::kNone) return {};
  return out;
}
inline constexpr auto gathers_of = rewrite::fact<"gathers_of">(unbinding_gathers);
inline constexpr auto unbinds_the_axis =
    rewrite::fact<"unbinds_the_axis">([](const Unbinding& unbinding) { return !unbinding.by_index.empty(); });

inline std::optional<ir::ValueId> split_and_squeeze(rewrite::Rewriter& r, const ValueView& root,
                                                    const Unbinding& unbinding) {
  const ir::NodeId root_id = root.value().producer;
  const ir::ValueId x = r.graph().node(root_id).inputs[0];
  const std::size_t dim = unbinding.by_index.size();
  // Split takes num_outputs from opset 18 on; before, the sizes (an attribute, an input from opset 13).
  const ir::Attribute pieces =
      r.opset() >= 18 ? ir::Attribute::make_int(Symbol("num_outputs"), static_cast<int64_t>(dim))
                      : ir::Attribute::make_ints(Symbol("split"), std::vector<int64_t>(dim, 1));
  const ir::ValueId first =
      r.node(Symbol("Split"), {x}, {ir::Attribute::make_int(Symbol("axis"), unbinding.axis), pieces}, {}, dim);
  const std::vector<ir::ValueId> outs = r.graph().node(r.graph().value(first).producer).outputs;
  // Squeeze's axes: one initializer shared by every Squeeze where they are an input (opset 13 on).
  const bool axes_as_input = r.opset() >= 13;
  const ir::ValueId axes = axes_as_input ? r.initializer(int64_tensor({unbinding.axis})) : ir::kNone;
  std::vector<ir::ValueId> squeezed;
  for (std::size_t k = 0; k < dim; ++k)
    squeezed.push_back(axes_as_input ? r.node(Symbol("Squeeze"), {outs[k], axes})
                                     : r.node(Symbol("Squeeze"), {outs[k]},
                                              {ir::Attribute::make_ints(Symbol("axes"), {unbinding.axis})}));
  return replace_readers(r, root_id, unbinding.by_index, squeezed);
}
}  // namespace concat

inline rewrite::RulePtr gathers_split_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  auto root = named<'r'>(Gather(x, etc));
  auto gathers = keep<'u'>(concat::gathers_of(root));
  // replace_with: the Split's outputs replace the other Gathers too, a list the DSL cannot replace.
  return rule("GathersSplit")
      .priority(1)
      .match(root)
      .when(concat::unbinds_the_axis(gathers))
      .to(replace_with("split", concat::split_and_squeeze, root, gathers));
}

}  // namespace xexp::patterns
