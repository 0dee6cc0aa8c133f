#pragma once
// Reductions. Their axes moved from attribute to input (ReduceSum at opset 13, the others at 18).
#include <string_view>

#include "xexp/infer/rule_table.hpp"

namespace xexp::infer {

inline void infer_reduce(InferContext& c) {
  const bool keepdims = c.attr_int("keepdims", 1) != 0;
  const bool noop_with_empty_axes = c.attr_int("noop_with_empty_axes", 0) != 0;
  if (!c.shape(0)) return c.set_output(0, c.type(0));
  const Shape& in = *c.shape(0);
  auto axes = c.moved_ints();
  if (!axes && c.moved_given()) {  // axes computed at run time: only the rank may be known
    if (keepdims) return c.set_output_rank(0, c.type(0), in.size());
    return c.set_output(0, c.type(0));
  }
  if (!axes || axes->empty()) {
    if (noop_with_empty_axes) return c.set_output(0, c.type(0), in);
    axes.emplace();
    for (std::size_t k = 0; k < in.size(); ++k) axes->push_back(static_cast<int64_t>(k));
  }
  std::vector<bool> reduced(in.size(), false);
  for (int64_t a : *axes) reduced[c.normalize_axis(a, in.size())] = true;
  Shape out;
  for (std::size_t k = 0; k < in.size(); ++k) {
    if (!reduced[k]) out.push_back(in[k]);
    else if (keepdims) out.push_back(Dim(1));
  }
  c.set_output(0, c.type(0), out);
}

inline void infer_arg_reduce(InferContext& c) {
  if (!c.shape(0)) return c.set_output(0, ElemType::Int64);
  Shape out = *c.shape(0);
  const std::size_t axis = c.normalize_axis(c.attr_int("axis", 0), out.size());
  if (c.attr_int("keepdims", 1)) out[axis] = Dim(1);
  else out.erase(out.begin() + static_cast<std::ptrdiff_t>(axis));
  c.set_output(0, ElemType::Int64, out);
}

inline void add_reduce_rules(RuleTable& t) {
  t.add({"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum",
         "ReduceLogSumExp", "ReduceSumSquare"},
        infer_reduce);
  t.add({"ArgMax", "ArgMin"}, infer_arg_reduce);
}

}  // namespace xexp::infer
