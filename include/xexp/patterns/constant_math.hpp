#pragma once
// Small computations on constants that rules need at match or rewrite time, done with the evaluator's
// kernels so that every element type is handled the same way as when the model runs.
#include <optional>
#include <vector>

#include "xexp/eval/evaluate_op.hpp"
#include "xexp/eval/tensor_util.hpp"
#include "xexp/rewrite/match.hpp"

namespace xexp::patterns {

// Runs one default-domain op on constants (opset 18 semantics, stable for the ops used here).
inline Tensor compute(Symbol op_type, std::vector<std::optional<Tensor>> inputs) {
  return eval::evaluate_op(op_type, {}, inputs, {}, 18, 1).at(0);
}

// Every element of a numeric tensor equals `value`.
inline bool all_equal(const Tensor& t, double value) {
  if (t.type() == ElemType::String || t.size() == 0) return false;
  for (double v : eval::as_doubles(t))
    if (v != value) return false;
  return true;
}

// The int64 values of a constant, or nullopt when it is not an int64 tensor.
inline std::optional<std::vector<int64_t>> int64_values(const Tensor& t) {
  if (t.type() != ElemType::Int64) return std::nullopt;
  auto data = t.data<int64_t>();
  return std::vector<int64_t>(data.begin(), data.end());
}

// Static dims of a value's shape, or nullopt.
inline std::optional<std::vector<int64_t>> static_dims_of(const rewrite::ValueView& v) {
  if (!v.shape()) return std::nullopt;
  return static_dims(*v.shape());
}

inline Tensor int64_tensor(const std::vector<int64_t>& values) {
  return Tensor::from<int64_t>({static_cast<int64_t>(values.size())}, values);
}

}  // namespace xexp::patterns
