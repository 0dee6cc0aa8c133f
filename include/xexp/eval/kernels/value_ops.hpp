#pragma once
// Kernels whose result depends on the element values, where the layout kernels (shape_ops.hpp) only
// move elements: CumSum (running sums), TopK (a sort), NonZero (where the non-zero elements are) and
// OneHot (positions read from index values).
#include <algorithm>
#include <numeric>

#include "xexp/eval/kernel.hpp"
#include "xexp/eval/kernels/shape_ops.hpp"
#include "xexp/eval/tensor_util.hpp"

namespace xexp::eval::kernels {

inline std::vector<Tensor> cumsum_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  const int64_t axis = normalize_axis(scalar_int(c.in(1)), x.rank());
  const bool exclusive = c.attr_int("exclusive", 0) != 0, reverse = c.attr_int("reverse", 0) != 0;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dims()[d];
  for (std::size_t d = axis + 1; d < x.rank(); ++d) inner *= x.dims()[d];
  const int64_t n = x.dims()[axis];
  return visit_type(x.type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Tensor out(x.type(), x.dims());
    auto src = x.data<T>();
    auto dst = out.mutable_data<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        T acc = T(0);
        for (int64_t s = 0; s < n; ++s) {
          const int64_t j = reverse ? n - 1 - s : s;
          const int64_t at = (o * n + j) * inner + i;
          if (exclusive) {
            dst[at] = acc;
            acc = wrapping_add<T>(acc, src[at]);
          } else {
            acc = wrapping_add<T>(acc, src[at]);  // overflow wraps, as in ONNX Runtime
            dst[at] = acc;
          }
        }
      }
    return std::vector<Tensor>{out};
  });
}

inline std::vector<Tensor> topk_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  const int64_t k = c.opset < 10 ? c.attr_int("k", 1) : scalar_int(c.in(1));
  const int64_t axis = normalize_axis(c.attr_int("axis", -1), x.rank());
  const bool largest = c.attr_int("largest", 1) != 0;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dims()[d];
  for (std::size_t d = axis + 1; d < x.rank(); ++d) inner *= x.dims()[d];
  const int64_t n = x.dims()[axis];
  if (k > n) c.fail("k is larger than the dimension");
  std::vector<int64_t> dims = x.dims();
  dims[axis] = k;
  Tensor indices(ElemType::Int64, dims);
  auto idst = indices.mutable_data<int64_t>();
  Tensor values = visit_type(x.type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Tensor out(x.type(), dims);
    auto src = x.data<T>();
    auto dst = out.mutable_data<T>();
    std::vector<int64_t> order(n);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        std::iota(order.begin(), order.end(), 0);
        auto at = [&](int64_t j) { return src[(o * n + j) * inner + i]; };
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return largest ? at(a) > at(b) : at(a) < at(b); });
        for (int64_t j = 0; j < k; ++j) {
          dst[(o * k + j) * inner + i] = at(order[j]);
          idst[(o * k + j) * inner + i] = order[j];
        }
      }
    return out;
  });
  return {values, indices};
}

inline std::vector<Tensor> non_zero_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  std::vector<int64_t> hits;
  visit_type(x.type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto src = x.data<T>();
    for (int64_t k = 0; k < x.size(); ++k)
      if (src[k] != T(0)) hits.push_back(k);
  });
  const auto r = static_cast<int64_t>(std::max<std::size_t>(x.rank(), 1));
  const auto n = static_cast<int64_t>(hits.size());
  Tensor out(ElemType::Int64, {x.rank() == 0 ? 0 : r, n});
  auto dst = out.mutable_data<int64_t>();
  const std::vector<int64_t> st = strides_of(x.dims());
  for (int64_t j = 0; j < n; ++j)
    for (std::size_t d = 0; d < x.rank(); ++d) dst[d * n + j] = (hits[j] / st[d]) % x.dims()[d];
  return {out};
}

inline std::vector<Tensor> one_hot_kernel(const KernelContext& c) {
  const Tensor& indices = c.in(0);
  const int64_t depth = scalar_int(c.in(1));
  const Tensor& values = c.in(2);
  if (values.rank() != 1 || values.size() != 2)
    c.fail("values has shape " + shape_str(make_shape(values.dims())) +
           ", (2) expected: the off and on values");
  const int64_t rank = static_cast<int64_t>(indices.rank()) + 1;
  const int64_t axis = normalize_axis(c.attr_int("axis", -1), static_cast<std::size_t>(rank));
  std::vector<int64_t> dims = indices.dims();
  dims.insert(dims.begin() + axis, depth);
  int64_t inner = 1;
  for (std::size_t d = axis; d < indices.rank(); ++d) inner *= indices.dims()[d];
  const std::vector<int64_t> idx = as_int64s(indices);
  Tensor out = expand_to(slice_axis(values, 0, 0, 1).reshaped({}), dims);
  auto dst = out.mutable_bytes();
  const std::size_t s = elem_size(values.type());
  for (int64_t k = 0; k < indices.size(); ++k) {
    int64_t v = idx[k] < 0 ? idx[k] + depth : idx[k];
    if (v < 0 || v >= depth) continue;
    const int64_t o = k / inner, i = k % inner;
    copy_element(dst, (o * depth + v) * inner + i, values.bytes(), 1, s);
  }
  return {out};
}

inline void register_value_ops(KernelRegistry& r) {
  r.add("CumSum", cumsum_kernel);
  r.add("TopK", topk_kernel);
  r.add("NonZero", non_zero_kernel);
  r.add("OneHot", one_hot_kernel);
}

}  // namespace xexp::eval::kernels
