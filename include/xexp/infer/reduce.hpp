#pragma once
// Reductions. Their axes moved from attribute to input: ReduceSum at opset 13, the others at 18.
#include <string_view>

#include "xexp/infer/rule_table.hpp"

namespace xexp::infer {

// The opset from which a reduction reads its axes from input 1.
inline int64_t reduce_axes_input_since(std::string_view op_type) { return op_type == "ReduceSum" ? 13 : 18; }

inline void infer_reduce(InferContext& c) {
  const int64_t since = reduce_axes_input_since(c.node().op_type.view());
  const bool keepdims = c.attr_int("keepdims", 1) != 0;
  const bool noop_with_empty_axes = c.attr_int("noop_with_empty_axes", 0) != 0;
  if (!c.shape(0)) return c.set_output(0, c.type(0));
  const Shape& in = *c.shape(0);
  auto axes = c.axes(since, 1);
  if (!axes && c.axes_given(since, 1)) {  // axes computed at run time: only the rank may be known
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
