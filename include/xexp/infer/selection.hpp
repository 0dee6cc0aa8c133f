#pragma once
// Ops whose output size depends on what they select: TopK (k elements along an axis, k a constant, a
// tracked shape value or a symbol) and NonZero (rank x count, the count a symbol of its own).
#include <string>

#include "xexp/infer/rule_table.hpp"

namespace xexp::infer {

// TopK: Values and Indices (int64) have X's shape with k on `axis`; k is the `k` attribute before
// opset 10, the one-element input K from then on.
inline void infer_topk(InferContext& c) {
  const ElemType type = c.type(0);
  if (!c.shape(0)) {
    c.set_output(0, type);
    c.set_output(1, ElemType::Int64);
    return;
  }
  Shape out = *c.shape(0);
  if (out.empty()) c.fail("the input is a scalar", c.input_name(0));
  const std::size_t axis = c.normalize_axis(c.attr_int("axis", -1), out.size());
  Dim k;
  if (c.opset() < 10) {
    k = Dim(c.attr_int("k", -1));
  } else if (const std::optional<Shape> content = c.value_shape(1)) {
    if (content->size() != 1) c.fail("K has " + std::to_string(content->size()) + " values, expected 1", c.input_name(1));
    k = (*content)[0];
  }
  const std::optional<int64_t> value = content_int(k);
  if (value && *value < 0) c.fail("k is " + std::to_string(*value), c.input_name(1));
  const Dim along = c.constraints().canonical(out[axis]);
  if (value && along.is_static() && *value > along.value())
    c.fail("k is " + std::to_string(*value) + " but axis " + std::to_string(axis) + " has " + along.str() + " elements",
           c.input_name(0));
  out[axis] = k;
  c.set_output(0, type, out);
  c.set_output(1, ElemType::Int64, out);
}

// NonZero: (rank of X, number of non-zero elements), the number a symbol named after the output.
inline void infer_nonzero(InferContext& c) {
  const Dim rank = c.shape(0) ? Dim(static_cast<int64_t>(c.shape(0)->size())) : Dim();
  c.set_output(0, ElemType::Int64, Shape{rank, c.fresh_dim(0, "NonZero")});
}

inline void add_selection_rules(RuleTable& t) {
  t.add({"TopK"}, infer_topk);
  t.add({"NonZero"}, infer_nonzero);
}

}  // namespace xexp::infer
