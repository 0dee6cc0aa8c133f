#pragma once
// Which elements ONNX Slice keeps along one dimension, and which dimensions ONNX Shape's start/end keep.
// Negative bounds count from the end and out-of-range bounds are clamped, with different limits for a
// negative step. Inference, the evaluator and constant folding all read bounds through these functions
// so that they agree on every edge case (INT64_MIN/INT64_MAX bounds, steps of any size, empty results).
#include <algorithm>
#include <cstdint>
#include <utility>

namespace xexp {

// The elements start, start + step, ... (`count` of them) along one dimension.
struct SliceRange {
  int64_t start = 0;
  int64_t count = 0;
  int64_t step = 1;

  int64_t operator[](int64_t k) const { return start + k * step; }
  bool operator==(const SliceRange&) const = default;
};

// ONNX Slice (opset 10+, and the attributes of opset 1) along a dimension of size `dim`: a negative
// start or end gets `dim` added, then a positive step clamps both to [0, dim], a negative step clamps
// start to [0, dim - 1] and end to [-1, dim - 1]. A step of 0 is invalid and selects nothing here; the
// callers report it.
inline SliceRange slice_range(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (dim <= 0 || step == 0) return {0, 0, step};
  // Adding dim to a negative bound cannot overflow.
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    // Written so that no intermediate overflows, whatever the step (INT64_MAX included).
    return {start, end > start ? (end - start - 1) / step + 1 : 0, step};
  }
  start = std::clamp<int64_t>(start, 0, dim - 1);
  end = std::clamp<int64_t>(end, -1, dim - 1);
  // Both operands of the division are negative; negating the step would overflow for INT64_MIN.
  return {start, start > end ? (end - start + 1) / step + 1 : 0, step};
}

// ONNX Shape (opset 15) over an input of rank `rank`: the dimensions [first, second) it returns. A
// negative start or end gets `rank` added, both are clamped to [0, rank], and an end before the start
// gives nothing.
inline std::pair<int64_t, int64_t> shape_range(int64_t rank, int64_t start, int64_t end) {
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  return {start, end};
}

}  // namespace xexp
