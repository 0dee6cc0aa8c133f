#pragma once
// Rebuilding an existing node elsewhere in the graph (same op, domain, attributes and other inputs, a new
// first input): how rules move an element-wise op across a layout change without listing its inputs.
#include <vector>

#include "xexp/rewrite/rewriter.hpp"

namespace xexp::patterns {

inline ir::ValueId copy_node_with_input(rewrite::Rewriter& r, const ir::Node& n, ir::ValueId first_input) {
  std::vector<ir::ValueId> inputs = n.inputs;
  inputs[0] = first_input;
  return r.node(n.op_type, std::move(inputs), n.attributes, n.domain);
}

}  // namespace xexp::patterns
