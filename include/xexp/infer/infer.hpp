#pragma once
// Type and shape inference, one node at a time: infer_node looks up the rule of the node's
// (domain, op type) and lets it fill the outputs' element types and shapes. Ops without a rule
// leave their outputs as they are. See context.hpp for what happens when facts conflict.
#include "xexp/core/config.hpp"
#include "xexp/infer/rule_table.hpp"
// The rules themselves: in compiled mode (core/config.hpp) only src/infer.cpp compiles them.
#if !defined(XEXP_COMPILED_LIB) || defined(XEXP_BUILD_INFER)
#include "xexp/infer/attention.hpp"
#include "xexp/infer/conv.hpp"
#include "xexp/infer/elementwise.hpp"
#include "xexp/infer/loss.hpp"
#include "xexp/infer/matmul.hpp"
#include "xexp/infer/normalization.hpp"
#include "xexp/infer/reduce.hpp"
#include "xexp/infer/resize.hpp"
#include "xexp/infer/rnn.hpp"
#include "xexp/infer/selection.hpp"
#include "xexp/infer/shape_ops.hpp"
#endif

namespace xexp::infer {

// Every shape rule, registered once.
XEXP_INLINE const RuleTable& rule_table();

#if !defined(XEXP_COMPILED_LIB) || defined(XEXP_BUILD_INFER)
XEXP_INLINE const RuleTable& rule_table() {
  static const RuleTable table = [] {
    RuleTable t;
    add_elementwise_rules(t);
    add_matmul_rules(t);
    add_shape_op_rules(t);
    add_reduce_rules(t);
    add_normalization_rules(t);
    add_conv_rules(t);
    add_resize_rules(t);
    add_selection_rules(t);
    add_rnn_rules(t);
    add_attention_rules(t);
    add_loss_rules(t);
    return t;
  }();
  return table;
}
#endif

inline bool has_rule(Symbol domain, Symbol op_type) { return rule_table().contains(domain, op_type); }

// `opset` is the default domain's; rules of other domains ignore it. Throws xexp::Error naming the
// node when the node contradicts what is known (shape mismatch, bad axis, ...).
inline void infer_node(ir::Graph& g, ir::NodeId n, int64_t opset, InferState& state) {
  const ir::Node& node = g.node(n);
  Rule rule = rule_table().find(node.domain, node.op_type);
  if (!rule) return;
  InferContext context(g, n, opset, state);
  rule(context);
}

// Without a state: constants are the graph's initializers and Constant nodes, nothing is remembered.
inline void infer_node(ir::Graph& g, ir::NodeId n, int64_t opset) {
  InferState state;
  infer_node(g, n, opset, state);
}

// Every node in execution order (a loaded model, a graph after rewriting).
inline void infer_graph(ir::Graph& g, int64_t opset, InferState& state) {
  for (ir::NodeId n : g.nodes()) infer_node(g, n, opset, state);
}

}  // namespace xexp::infer
