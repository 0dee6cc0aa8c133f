#pragma once
// Losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss give one value, or with reduction 'none'
// one per target (the target's shape); SoftmaxCrossEntropyLoss's log_prob has the scores' shape.
#include "xexp/infer/rule_table.hpp"

namespace xexp::infer {

inline void infer_loss(InferContext& c) {
  const ElemType type = c.type(0);
  if (c.attr_string("reduction", "mean") != "none")
    c.set_output(0, type, Shape{});
  else
    c.set_output(0, type, c.shape(1));
  c.set_output(1, type, c.shape(0));
}

inline void add_loss_rules(RuleTable& t) {
  t.add({"NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"}, infer_loss);
}

}  // namespace xexp::infer
