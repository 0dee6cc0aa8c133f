#pragma once
// What a value computed from constants alone holds, for the rules that only need to read it. Exporters
// build causal masks this way (ConstantOfShape, Trilu, a comparison of two aranges, Expand to the
// batch): folding leaves them when the table is larger than what it stores in the model, and the Expand
// to the batch is not even constant in a dynamic export. Evaluating such a cone here, without writing it,
// lets a rule prove the mask causal and drop it.
//
// The result is known up to broadcasting: it broadcasts (right aligned) to the value, which is all an
// additive mask needs. So an Expand, whose target may be computed at run time, is read as its input;
// elementwise ops and comparisons broadcast such results as they would the values; a Slice cuts only the
// axes the result holds (a cut of equal elements holds equal elements); an Unsqueeze of leading axes does
// nothing. ConstantOfShape, Range, Reshape and Trilu read their inputs whole. The ops are those whose
// semantics no opset changed (evaluated at opset 18). Anything else, a cone over kMaxComputedNodes nodes
// or a tensor over kMaxComputedElements elements gives nullopt.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <numeric>
#include <optional>
#include <string_view>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace detail {

inline constexpr int kMaxComputedNodes = 16;
inline constexpr int64_t kMaxComputedElements = int64_t{1} << 23;

// The ops read besides Expand, Slice and Unsqueeze: no opset changed what they compute, so they are
// evaluated at opset 18 whatever the model's.
inline bool computes_same_in_every_opset(const ir::Node& n) {
  static constexpr std::string_view ops[] = {
      "Add",  "And",     "Cast",  "ConstantOfShape", "Div", "Equal", "Greater", "GreaterOrEqual", "Less",
      "LessOrEqual", "Mul", "Neg", "Not", "Or", "Range", "Reshape", "Sub", "Trilu", "Where"};
  return n.domain.empty() && std::find(std::begin(ops), std::end(ops), n.op_type.view()) != std::end(ops);
}

// Whether op n would make more than kMaxComputedElements elements of these inputs (checked before
// running it: a broadcast or a ConstantOfShape may ask for far more than its inputs hold).
inline bool over_limit(const ir::Node& n, const std::vector<std::optional<Tensor>>& inputs) {
  const std::string_view op = n.op_type.view();
  auto within = [](int64_t count, int64_t d) { return d >= 0 && (d == 0 || count <= kMaxComputedElements / d); };
  int64_t count = 1;
  const std::size_t needed = op == "Range" ? 3 : 1;  // inputs that may not be omitted
  if (inputs.size() < needed) return true;  // an empty or a missing input is left to the runtime
  for (std::size_t k = 0; k < inputs.size(); ++k)
    if (inputs[k] ? inputs[k]->size() == 0 : k < needed) return true;
  if (op == "ConstantOfShape") {
    for (int64_t d : eval::as_int64s(*inputs[0]))
      if (!within(count, d) || (count *= d) > kMaxComputedElements) return true;
    return false;
  }
  if (op == "Range") {
    const double start = eval::element_as_double(*inputs[0], 0), limit = eval::element_as_double(*inputs[1], 0),
                 delta = eval::element_as_double(*inputs[2], 0);
    return delta == 0 || !(std::ceil((limit - start) / delta) <= static_cast<double>(kMaxComputedElements));
  }
  std::vector<int64_t> dims;  // the inputs broadcast (Reshape and Trilu keep their first input's count)
  for (const std::optional<Tensor>& t : inputs) {
    if (!t) continue;
    const std::vector<int64_t>& d = t->dims();
    if (d.size() > dims.size()) dims.insert(dims.begin(), d.size() - dims.size(), 1);
    for (std::size_t k = 0; k < d.size(); ++k) {
      int64_t& to = dims[dims.size() - d.size() + k];
      to = to == 1 ? d[k] : to;
    }
    if (op == "Reshape" || op == "Trilu") break;
  }
  for (int64_t d : dims)
    if (!within(count, d) || (count *= d) > kMaxComputedElements) return true;
  return false;
}

// Slice(b, ...) where b broadcasts to the Slice's input, of rank `rank`: the cut axes where b holds
// more than one element are cut in b, the others stay broadcast.
inline std::optional<Tensor> slice_broadcast(const ir::Graph& g, const ir::Node& n, const Tensor& b,
                                             int64_t rank) {
  auto input = [&](std::size_t k) { return k < n.inputs.size() ? n.inputs[k] : ir::kNone; };
  const auto starts = int_constant(g, input(1)), ends = int_constant(g, input(2));
  std::optional<std::vector<int64_t>> axes, steps;
  if (!starts || !ends || starts->size() != ends->size()) return std::nullopt;
  if (input(3) == ir::kNone) {
    axes.emplace(starts->size());
    std::iota(axes->begin(), axes->end(), 0);
  } else {
    axes = int_constant(g, input(3));
  }
  steps = input(4) == ir::kNone ? std::vector<int64_t>(starts->size(), 1) : int_constant(g, input(4));
  if (!axes || !steps || axes->size() != starts->size() || steps->size() != starts->size()) return std::nullopt;
  const auto shift = rank - static_cast<int64_t>(b.rank());  // b's axis k is the value's axis k + shift
  std::vector<int64_t> kept_starts, kept_ends, kept_axes, kept_steps;
  for (std::size_t k = 0; k < axes->size(); ++k) {
    const int64_t axis = (*axes)[k] < 0 ? (*axes)[k] + rank : (*axes)[k];
    if (axis < 0 || axis >= rank) return std::nullopt;
    if (axis < shift || b.dims()[static_cast<std::size_t>(axis - shift)] == 1) continue;
    kept_starts.push_back((*starts)[k]);
    kept_ends.push_back((*ends)[k]);
    kept_axes.push_back(axis - shift);
    kept_steps.push_back((*steps)[k]);
  }
  if (kept_axes.empty()) return b;
  return compute(Symbol("Slice"), {b, int64_tensor(kept_starts), int64_tensor(kept_ends),
                                   int64_tensor(kept_axes), int64_tensor(kept_steps)});
}

inline std::optional<Tensor> computed_up_to_broadcast(const ir::Graph& g, ir::ValueId v, int& budget);

// The value v holds, whole (its shape is the inferred static shape), or nullopt.
inline std::optional<Tensor> computed_whole(const ir::Graph& g, ir::ValueId v, int& budget) {
  std::optional<Tensor> t = computed_up_to_broadcast(g, v, budget);
  const std::optional<Shape>& shape = g.value(v).shape;
  if (!t || !shape || t->rank() != shape->size()) return std::nullopt;
  for (std::size_t k = 0; k < shape->size(); ++k)
    if (!((*shape)[k] == Dim(t->dims()[k]))) return std::nullopt;
  return t;
}

inline std::optional<Tensor> computed_up_to_broadcast(const ir::Graph& g, ir::ValueId v, int& budget) {
  if (v == ir::kNone) return std::nullopt;
  if (const Tensor* t = rewrite::constant_tensor(g, v)) return *t;
  const ir::Value& value = g.value(v);
  if (value.producer == ir::kNone || value.output_index != 0 || --budget < 0) return std::nullopt;
  const ir::Node& n = g.node(value.producer);
  if (!n.domain.empty() || n.inputs.empty()) return std::nullopt;
  const std::string_view op = n.op_type.view();
  if (op == "Expand") return computed_up_to_broadcast(g, n.inputs[0], budget);
  if (op == "Slice" || op == "Unsqueeze") {
    const std::optional<Shape>& shape = g.value(n.inputs[0]).shape;
    std::optional<Tensor> b = computed_up_to_broadcast(g, n.inputs[0], budget);
    if (!b || !shape || b->rank() > shape->size()) return std::nullopt;
    const auto rank = static_cast<int64_t>(shape->size());
    if (op == "Slice") return slice_broadcast(g, n, *b, rank);
    const std::optional<std::vector<int64_t>> axes = unsqueezed_axes(g, n);
    if (!axes) return std::nullopt;
    // b of the input's rank takes the new axes where they go; a smaller b only leading ones, as it is.
    if (static_cast<int64_t>(b->rank()) == rank) return compute(Symbol("Unsqueeze"), {*b, int64_tensor(*axes)});
    return are_leading_axes(*axes) ? b : std::optional<Tensor>();
  }
  if (!computes_same_in_every_opset(n)) return std::nullopt;
  const bool broadcasts = op != "ConstantOfShape" && op != "Range" && op != "Reshape" && op != "Trilu";
  std::vector<std::optional<Tensor>> inputs;
  for (ir::ValueId in : n.inputs) {
    if (in == ir::kNone) {
      inputs.emplace_back();
      continue;
    }
    inputs.push_back(broadcasts ? computed_up_to_broadcast(g, in, budget) : computed_whole(g, in, budget));
    if (!inputs.back()) return std::nullopt;
  }
  if (over_limit(n, inputs)) return std::nullopt;
  return eval::evaluate_op(n.op_type, {}, inputs, n.attributes, 18, 1).at(0);
}

}  // namespace detail

// What v holds, up to broadcasting (see above), when it is computed from constants alone.
inline std::optional<Tensor> computed_constant(const ir::Graph& g, ir::ValueId v) {
  int budget = detail::kMaxComputedNodes;
  try {
    return detail::computed_up_to_broadcast(g, v, budget);
  } catch (const Error&) {
    return std::nullopt;  // inputs a kernel refuses: left to the runtime, which will say so
  }
}

}  // namespace xexp::patterns
