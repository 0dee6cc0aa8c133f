#pragma once
// Replacements that build a normalization node with several outputs, for the rules whose matched nodes
// had consumers outside the match: a Skip*Normalization's input_skip_bias_sum output takes over the
// residual Add's other consumers, and a rebuilt node takes over its predecessor's extra outputs. The
// DSL's replacements produce one value (the root's), hence these lambdas.
#include <optional>
#include <string_view>
#include <vector>

#include "xexp/rewrite/rewriter.hpp"

namespace xexp::patterns::detail {

// Consumers of from[k] read to[k] instead, for k >= 1 (the first output is the rule's replacement),
// and to[k] gets from[k]'s type: the new node computes what the old one did.
inline void move_extra_outputs(ir::Graph& g, const std::vector<ir::ValueId>& from, const std::vector<ir::ValueId>& to) {
  for (std::size_t k = 1; k < from.size() && k < to.size(); ++k) {
    if (from[k] == ir::kNone) continue;
    g.value(to[k]).elem = g.value(from[k]).elem;
    g.value(to[k]).shape = g.value(from[k]).shape;
    g.replace_all_uses(from[k], to[k]);
  }
}

inline std::vector<ir::ValueId> outputs_of(const ir::Graph& g, ir::ValueId first) {
  return g.node(g.value(first).producer).outputs;
}

// The driver collects an iteration's matches before applying any: an earlier replacement may have
// moved the consumers of a value this match captured (a residual chain: the sum one fusion absorbs is
// the input of the next) and removed its producer. Such a match declines; the next iteration finds it
// again on the new values.
inline bool all_alive(const ir::Graph& g, const std::vector<ir::ValueId>& values) {
  for (ir::ValueId v : values)
    if (v != ir::kNone && !g.value(v).alive) return false;
  return true;
}

// com.microsoft Skip[Simplified]LayerNormalization(inputs) with outputs (Y, mean, inv_std_var,
// input_skip_bias_sum); the consumers of `sum` (the Add the node absorbs) read input_skip_bias_sum.
// The statistics are float over the leading axes (what ONNX Runtime returns); typed here because the
// simplified form's sum is the 4th output, not the 3rd.
inline std::optional<ir::ValueId> skip_normalization(rewrite::Rewriter& r, std::string_view op_type,
                                                     std::vector<ir::ValueId> inputs, float epsilon, ir::ValueId sum) {
  ir::Graph& g = r.graph();
  if (!all_alive(g, inputs) || !all_alive(g, {sum})) return std::nullopt;
  const ir::ValueId y = r.node(Symbol(op_type), std::move(inputs), {ir::Attribute::make_float("epsilon", epsilon)},
                               Symbol("com.microsoft"), 4);
  const std::vector<ir::ValueId> outputs = outputs_of(g, y);
  std::optional<Shape> stats = g.value(sum).shape;
  if (stats && !stats->empty()) stats->back() = Dim(1);
  for (std::size_t k : {1, 2}) {
    g.value(outputs[k]).elem = ElemType::Float;
    g.value(outputs[k]).shape = stats;
  }
  move_extra_outputs(g, {ir::kNone, sum}, {y, outputs[3]});
  return y;
}

// The node producing `v` again, with input `slot` replaced; its extra outputs' consumers follow.
inline std::optional<ir::ValueId> rebuilt_with_input(rewrite::Rewriter& r, const rewrite::ValueView& v,
                                                     std::size_t slot, ir::ValueId input) {
  ir::Graph& g = r.graph();
  if (!v.value().alive || !all_alive(g, g.node(v.value().producer).inputs)) return std::nullopt;
  const ir::Node& n = g.node(v.value().producer);
  std::vector<ir::ValueId> inputs = n.inputs;
  inputs[slot] = input;
  const std::vector<ir::ValueId> old_outputs = n.outputs;  // copies: adding a node may move `n`
  std::vector<ir::Attribute> attributes = n.attributes;
  const Symbol op_type = n.op_type, domain = n.domain;
  const ir::ValueId first = r.node(op_type, std::move(inputs), std::move(attributes), domain, old_outputs.size());
  move_extra_outputs(g, old_outputs, outputs_of(g, first));
  return first;
}

}  // namespace xexp::patterns::detail
