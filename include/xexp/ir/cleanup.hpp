#pragma once
// Clean-ups on the IR that the builder and the optimizer share.
#include <cstddef>
#include <vector>

#include "xexp/ir/graph.hpp"

namespace xexp::ir {

// Drops the initializers nothing reads (and that are not graph outputs); returns how many.
inline std::size_t remove_unused_initializers(Graph& g) {
  std::vector<ValueId> kept;
  std::size_t removed = 0;
  for (ValueId id : g.initializers()) {
    Value& v = g.value(id);
    if (v.uses.empty() && !v.is_graph_output()) {
      v.alive = false;
      ++removed;
    } else {
      kept.push_back(id);
    }
  }
  g.set_initializer_order(std::move(kept));
  return removed;
}

}  // namespace xexp::ir
