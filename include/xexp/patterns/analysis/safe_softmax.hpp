#pragma once
// An analysis of the attention rules (patterns/onnx/attention.hpp): the safe softmax they read through.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns::analysis {

// torch's safe softmax, Where(IsNaN(P), 0, P) around the Softmax P, zeroes the rows a mask hides
// entirely (0/0 in the Softmax) instead of leaving them NaN. The rule reads through it (rewrite::through);
// ONNX's Attention gives such rows 0 itself (the opset-23 errata, ONNX Runtime 1.30), MultiHeadAttention
// leaves them NaN, so its writer zeroes them after it (nan_guarded).
inline rewrite::Skipped safe_softmax_guard(const ir::Graph& g, ir::ValueId v) {
  const ir::Node* where = producer_of(g, v, "Where");
  if (!where || where->inputs.size() != 3) return {};
  const ir::NodeId is_nan_id = g.value(where->inputs[0]).producer;
  const ir::Node* is_nan = producer_of(g, where->inputs[0], "IsNaN");
  if (!is_nan || is_nan->inputs[0] != where->inputs[2] || scalar_constant(g, where->inputs[1]) != 0.0)
    return {};
  return {where->inputs[2], {g.value(v).producer, is_nan_id}, 2};
}

}  // namespace xexp::patterns::analysis
