#pragma once
// Facts on the readers of a value and on execution order, for rules that rewrite several readers at once.
#include <algorithm>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "xexp/patterns/facts/types.hpp"

namespace xexp::patterns {

// ---- readers ----------------------------------------------------------------------------------------
// v is no graph output, something reads it, and every reader is one of `ops`, each written
// "domain.Op" outside the default domain ("MatMul", "com.microsoft.FusedMatMul"). Rules that take a
// shared value into flags of its readers check it: the value goes once the last reader has taken it.
inline bool read_only_by(const ValueView& v, std::initializer_list<std::string_view> ops) {
  if (v.value().is_graph_output() || v.value().uses.empty()) return false;
  for (const ir::Use& u : v.value().uses) {
    const ir::Node& n = v.graph->node(u.node);
    const std::string_view domain = n.domain.view(), op = n.op_type.view();
    const auto named = [&](std::string_view q) {
      return domain.empty() ? q == op
                            : q.size() == domain.size() + 1 + op.size() && q.starts_with(domain) &&
                                  q[domain.size()] == '.' && q.ends_with(op);
    };
    if (std::none_of(ops.begin(), ops.end(), named)) return false;
  }
  return true;
}

// ---- execution order --------------------------------------------------------------------------------
// Rules that rewrite several readers of one value x at once (a Split for its Slices, a TopK for a
// ReduceMax and an ArgMax) root themselves at the first of those readers and insert the new node there,
// before every reader of the values it replaces. `root` comes before every node of `others`: no node
// of them lies between x's producer (the graph start for an input) and the root.
inline bool first_in_order(const ir::Graph& g, ir::NodeId root, ir::ValueId x,
                           const std::vector<ir::NodeId>& others) {
  const ir::NodeId stop = g.value(x).producer;
  for (ir::NodeId k = g.node(root).prev; k != ir::kNone && k != stop; k = g.node(k).prev)
    if (std::find(others.begin(), others.end(), k) != others.end()) return false;
  return true;
}
// The readers of the root's first input x, at their first input, that `accepts` takes (it may record what it
// read of each): the root among them with at least one other, no other's first output a graph output (it
// would stay), the root first in order. Empty when one of these fails. SlicesSplit and GathersSplit start
// from it and end with replace_readers.
template <class Accept>
std::vector<ir::NodeId> sibling_readers(const ir::Graph& g, ir::NodeId root, Accept&& accepts) {
  const ir::ValueId x = g.node(root).inputs[0];
  std::vector<ir::NodeId> readers;
  std::vector<ir::NodeId> others;
  for (const ir::Use& u : g.value(x).uses) {
    if (u.slot != 0 || !accepts(u.node)) continue;
    if (u.node != root) {
      if (g.value(g.node(u.node).outputs[0]).is_graph_output()) return {};
      others.push_back(u.node);
    }
    readers.push_back(u.node);
  }
  if (others.empty() || others.size() == readers.size() || !first_in_order(g, root, x, others)) return {};
  return readers;
}
// Each reader's first output becomes fresh[k] (after the match, as the driver wants); the root's
// counterpart is returned for the driver to put in place of the root.
inline ir::ValueId replace_readers(rewrite::Rewriter& r, ir::NodeId root,
                                   const std::vector<ir::NodeId>& readers,
                                   const std::vector<ir::ValueId>& fresh) {
  ir::ValueId root_replacement = ir::kNone;
  for (std::size_t k = 0; k < readers.size(); ++k) {
    if (readers[k] == root)
      root_replacement = fresh[k];
    else
      r.replace_later(r.graph().node(readers[k]).outputs[0], fresh[k]);
  }
  return root_replacement;
}

// v is read only by products, MatMul or Gemm (a Transpose they can take as a flag).
inline constexpr auto read_only_by_matmul_or_gemm =
    fact<"read_only_by_matmul_or_gemm">([](const ValueView& v) {
      return read_only_by(v, {"MatMul", "Gemm"});
    });

}  // namespace xexp::patterns
