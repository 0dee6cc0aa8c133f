#pragma once
// What rules read from constant inputs (initializers or Constant outputs): integer lists (shapes, axes,
// indices) and single numbers (scalars of any numeric type).
#include <cstdint>
#include <optional>
#include <vector>

#include "xexp/eval/tensor_util.hpp"
#include "xexp/rewrite/match.hpp"

namespace xexp::patterns {

inline bool is_integer_type(ElemType t) { return t == ElemType::Int64 || t == ElemType::Int32; }

// The values of a constant int32/int64 tensor, or nullopt when the value is not such a constant.
inline std::optional<std::vector<int64_t>> int_constant(const ir::Graph& g, ir::ValueId v) {
  const Tensor* t = rewrite::constant_tensor(g, v);
  if (!t || !is_integer_type(t->type())) return std::nullopt;
  return eval::as_int64s(*t);
}
inline std::optional<std::vector<int64_t>> int_constant(const rewrite::ValueView& v) {
  return int_constant(*v.graph, v.id);
}

// The single number held by a constant of one element (shape () or (1,) or (1,1)...), or nullopt.
inline std::optional<double> scalar_constant(const ir::Graph& g, ir::ValueId v) {
  const Tensor* t = rewrite::constant_tensor(g, v);
  if (!t || t->size() != 1 || t->type() == ElemType::String) return std::nullopt;
  return eval::element_as_double(*t, 0);
}
inline std::optional<double> scalar_constant(const rewrite::ValueView& v) { return scalar_constant(*v.graph, v.id); }

// Every element equals `value` (true for an empty tensor).
inline bool all_elements_equal(const Tensor& t, double value) {
  if (t.type() == ElemType::String) return false;
  for (int64_t k = 0; k < t.size(); ++k)
    if (eval::element_as_double(t, k) != value) return false;
  return true;
}

}  // namespace xexp::patterns
