#pragma once
// Layout and shape kernels. They move elements without looking at them, so they work for every element
// type, strings included; most reduce to `remap` (per-dimension coordinate maps).
#include <algorithm>
#include <numeric>
#include <optional>

#include "xexp/core/checked_int.hpp"
#include "xexp/core/slice_range.hpp"
#include "xexp/eval/kernel.hpp"
#include "xexp/eval/tensor_util.hpp"
#include "xexp/ir/constant_node.hpp"

namespace xexp::eval::kernels {

inline std::vector<Tensor> identity_kernel(const KernelContext& c) { return {c.in(0)}; }

inline std::vector<Tensor> constant_kernel(const KernelContext& c) {
  if (std::optional<Tensor> t = ir::constant_attribute_value(c.attributes)) return {std::move(*t)};
  c.fail("no readable value attribute (sparse_value is not supported)");
}

inline std::vector<int64_t> reshape_dims(const std::vector<int64_t>& in_dims, std::vector<int64_t> shape, bool allowzero) {
  int64_t known = 1, infer = -1;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0 && !allowzero) {
      if (d >= in_dims.size()) throw Error("Reshape: 0 refers to a missing input dimension");
      shape[d] = in_dims[d];
    }
    if (shape[d] == -1) {
      if (infer >= 0) throw Error("Reshape: more than one -1");
      infer = static_cast<int64_t>(d);
    } else if (shape[d] < 0 || __builtin_mul_overflow(known, shape[d], &known)) {
      throw Error(shape[d] < 0 ? "Reshape: dimension " + std::to_string(d) + " of the shape is " +
                                     std::to_string(shape[d])
                               : std::string("Reshape: the shape holds more elements than int64 counts"));
    }
  }
  const int64_t total = dims_element_count(in_dims);
  if (infer >= 0) {
    if (known == 0 || total % known != 0) throw Error("Reshape: cannot infer -1 for " + shape_str(make_shape(in_dims)));
    shape[infer] = total / known;
  }
  if (dims_element_count(shape) != total)
    throw Error("Reshape: cannot reshape " + shape_str(make_shape(in_dims)) + " into " + shape_str(make_shape(shape)));
  return shape;
}

inline std::vector<Tensor> reshape_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  std::vector<int64_t> shape = c.opset < 5 ? c.attr_ints("shape").value_or(std::vector<int64_t>{}) : as_int64s(c.in(1));
  return {x.reshaped(reshape_dims(x.dims(), std::move(shape), c.attr_int("allowzero", 0) != 0))};
}

inline std::vector<Tensor> flatten_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  const int64_t r = static_cast<int64_t>(x.rank());
  int64_t axis = c.attr_int("axis", 1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r) c.fail("axis out of range");
  // each side is the product of its own dimensions: (2, 0, 2) at axis 3 is (0, 1), not (0, 0)
  int64_t a = 1, b = 1;
  for (int64_t d = 0; d < r; ++d) (d < axis ? a : b) *= x.dims()[d];
  return {x.reshaped({a, b})};
}

inline Tensor transpose(const Tensor& x, std::vector<int64_t> perm) {
  if (perm.empty()) {
    perm = identity_perm(x.rank());
    std::reverse(perm.begin(), perm.end());
  }
  if (perm.size() != x.rank()) throw Error("Transpose: perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(x.rank()));
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  if (sorted != identity_perm(x.rank())) throw Error("Transpose: perm is not a permutation of the axes");
  std::vector<int64_t> dims(perm.size());
  std::vector<std::vector<int64_t>> maps(perm.size());
  for (std::size_t d = 0; d < perm.size(); ++d) {
    dims[d] = x.dims()[perm[d]];
    maps[d] = iota_map(dims[d]);
  }
  return remap(x, dims, perm, maps);
}
inline std::vector<Tensor> transpose_kernel(const KernelContext& c) {
  return {transpose(c.in(0), c.attr_ints("perm").value_or(std::vector<int64_t>{}))};
}

inline Tensor concat(const std::vector<const Tensor*>& parts, int64_t axis_attr) {
  const Tensor& first = *parts.at(0);
  const int64_t axis = normalize_axis(axis_attr, first.rank());
  std::vector<int64_t> dims = first.dims();
  dims[axis] = 0;
  for (const Tensor* t : parts) {
    if (t->rank() != first.rank() || t->type() != first.type()) throw Error("Concat: inputs differ in rank or type");
    for (std::size_t d = 0; d < first.rank(); ++d)
      if (static_cast<int64_t>(d) != axis && t->dims()[d] != first.dims()[d])
        throw Error("Concat: inputs of shapes " + shape_str(first.shape()) + " and " + shape_str(t->shape()) +
                    " differ outside axis " + std::to_string(axis));
    dims[axis] += t->dims()[axis];
  }
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= dims[d];
  if (first.type() == ElemType::String) {
    std::vector<std::string> out;
    for (int64_t o = 0; o < outer; ++o)
      for (const Tensor* t : parts) {
        const int64_t block = t->size() / std::max<int64_t>(outer, 1);
        const auto& s = t->string_data();
        out.insert(out.end(), s.begin() + o * block, s.begin() + (o + 1) * block);
      }
    return Tensor::strings(dims, std::move(out));
  }
  Tensor out(first.type(), dims);
  auto dst = out.mutable_bytes();
  std::size_t pos = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (const Tensor* t : parts) {
      const std::size_t block = t->bytes().size() / static_cast<std::size_t>(std::max<int64_t>(outer, 1));
      if (block) std::memcpy(dst.data() + pos, t->bytes().data() + o * block, block);
      pos += block;
    }
  return out;
}
inline std::vector<Tensor> concat_kernel(const KernelContext& c) {
  std::vector<const Tensor*> parts;
  for (std::size_t i = 0; i < c.input_count(); ++i) parts.push_back(&c.in(i));
  return {concat(parts, c.attr_int("axis", 0))};
}

// Slice of `x` along `axis` from `start` with `count` elements of step `step`.
inline Tensor slice_axis(const Tensor& x, int64_t axis, int64_t start, int64_t count, int64_t step = 1) {
  std::vector<int64_t> dims = x.dims();
  std::vector<std::vector<int64_t>> maps(dims.size());
  for (std::size_t d = 0; d < dims.size(); ++d) maps[d] = iota_map(dims[d]);
  dims[axis] = count;
  maps[axis] = iota_map(count, start, step);
  return remap(x, dims, identity_perm(dims.size()), maps);
}

inline std::vector<Tensor> split_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  const int64_t axis = normalize_axis(c.attr_int("axis", 0), x.rank());
  const int64_t n = x.dims()[axis];
  std::vector<int64_t> sizes;
  if (c.opset >= 13 && c.has(1)) sizes = as_int64s(c.in(1));
  else if (c.opset < 13) sizes = c.attr_ints("split").value_or(std::vector<int64_t>{});
  if (sizes.empty()) {
    const auto parts = static_cast<int64_t>(c.opset >= 18 && c.attr("num_outputs") ? c.attr_int("num_outputs", 1) : c.n_outputs);
    if (parts < 1) c.fail("num_outputs is " + std::to_string(parts) + ", at least 1 expected");
    const int64_t each = (n + parts - 1) / parts;  // the last chunk may be smaller (opset 18)
    for (int64_t k = 0, left = n; k < parts; ++k, left -= each) sizes.push_back(std::min(each, left));
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    const std::optional<int64_t> sum = checked_add(total, s);
    if (s < 0 || !sum) c.fail("split sizes must be non-negative and add up to the dimension");
    total = *sum;
  }
  if (total != n) c.fail("split sizes do not add up to the dimension");
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t s : sizes) {
    out.push_back(slice_axis(x, axis, start, s));
    start += s;
  }
  return out;
}

inline std::vector<Tensor> slice_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.opset < 10) {
    starts = c.attr_ints("starts").value_or(std::vector<int64_t>{});
    ends = c.attr_ints("ends").value_or(std::vector<int64_t>{});
    axes = c.attr_ints("axes").value_or(std::vector<int64_t>{});
  } else {
    starts = as_int64s(c.in(1));
    ends = as_int64s(c.in(2));
    if (c.has(3)) axes = as_int64s(c.in(3));
    if (c.has(4)) steps = as_int64s(c.in(4));
  }
  if (axes.empty()) axes = identity_perm(starts.size());
  if (steps.empty()) steps.assign(starts.size(), 1);
  std::vector<int64_t> dims = x.dims();
  std::vector<std::vector<int64_t>> maps(dims.size());
  for (std::size_t d = 0; d < dims.size(); ++d) maps[d] = iota_map(dims[d]);
  for (std::size_t k = 0; k < starts.size(); ++k) {
    const int64_t a = normalize_axis(axes[k], x.rank());
    const int64_t n = x.dims()[a], step = steps[k];
    if (step == 0) c.fail("step is 0");
    const SliceRange kept = slice_range(n, starts[k], ends[k], step);
    dims[a] = kept.count;
    maps[a] = iota_map(kept.count, kept.start, step);
  }
  return {remap(x, dims, identity_perm(dims.size()), maps)};
}

// An index into a dimension of size n, a negative one counted from the end; outside [-n, n) is an error.
inline int64_t checked_index(const KernelContext& c, int64_t i, int64_t n) {
  if (i < -n || i >= n) c.fail("index " + std::to_string(i) + " is out of range [" + std::to_string(-n) + ", " + std::to_string(n) + ")");
  return i < 0 ? i + n : i;
}
inline std::vector<int64_t> checked_indices(const KernelContext& c, const Tensor& indices, int64_t n) {
  std::vector<int64_t> idx = as_int64s(indices);
  for (int64_t& i : idx) i = checked_index(c, i, n);
  return idx;
}

// GatherElements and ScatterElements: indices of the data's rank, no larger than it outside `axis`.
inline void check_element_indices(const KernelContext& c, const Tensor& x, const Tensor& indices, int64_t axis) {
  bool fits = indices.rank() == x.rank();
  for (std::size_t d = 0; fits && d < x.rank(); ++d)
    fits = static_cast<int64_t>(d) == axis || indices.dims()[d] <= x.dims()[d];
  if (!fits)
    c.fail("indices of shape " + shape_str(indices.shape()) + " do not fit data of shape " + shape_str(x.shape()) +
           " outside axis " + std::to_string(axis));
}

inline std::vector<Tensor> gather_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  const Tensor& indices = c.in(1);
  const int64_t axis = normalize_axis(c.attr_int("axis", 0), x.rank());
  const std::vector<int64_t> idx = checked_indices(c, indices, x.dims()[axis]);
  std::vector<int64_t> flat_dims = x.dims();
  flat_dims[axis] = static_cast<int64_t>(idx.size());
  std::vector<std::vector<int64_t>> maps(x.rank());
  for (std::size_t d = 0; d < x.rank(); ++d) maps[d] = iota_map(flat_dims[d]);
  maps[axis] = idx;
  Tensor flat = remap(x, flat_dims, identity_perm(x.rank()), maps);
  std::vector<int64_t> dims(x.dims().begin(), x.dims().begin() + axis);
  dims.insert(dims.end(), indices.dims().begin(), indices.dims().end());
  dims.insert(dims.end(), x.dims().begin() + axis + 1, x.dims().end());
  return {flat.reshaped(dims)};
}

// Copies one element between two tensors of the same type (strings excluded).
inline void copy_element(std::span<std::byte> dst, int64_t di, std::span<const std::byte> src, int64_t si, std::size_t size) {
  std::memcpy(dst.data() + di * size, src.data() + si * size, size);
}

inline std::vector<Tensor> gather_elements_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  const Tensor& indices = c.in(1);
  const int64_t axis = normalize_axis(c.attr_int("axis", 0), x.rank());
  const std::vector<int64_t> idx = as_int64s(indices);
  check_element_indices(c, x, indices, axis);
  const std::vector<int64_t> xs = strides_of(x.dims()), is = strides_of(indices.dims());
  Tensor out(x.type(), indices.dims());
  auto dst = out.mutable_bytes();
  const std::size_t s = elem_size(x.type());
  for (int64_t k = 0; k < indices.size(); ++k) {
    int64_t off = 0, rest = k;
    for (std::size_t d = 0; d < indices.rank(); ++d) {
      int64_t coord = rest / is[d];
      rest %= is[d];
      if (static_cast<int64_t>(d) == axis) {
        coord = idx[k] < 0 ? idx[k] + x.dims()[d] : idx[k];
        if (coord < 0 || coord >= x.dims()[d]) c.fail("index out of range");
      }
      off += coord * xs[d];
    }
    copy_element(dst, k, x.bytes(), off, s);
  }
  return {out};
}

inline std::vector<Tensor> scatter_elements_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  const Tensor& indices = c.in(1);
  const Tensor& updates = c.in(2);
  const int64_t axis = normalize_axis(c.attr_int("axis", 0), x.rank());
  const std::string reduction = c.attr_string("reduction", "none");
  check_element_indices(c, x, indices, axis);
  if (updates.dims() != indices.dims())
    c.fail("updates of shape " + shape_str(updates.shape()) + " differ from indices of shape " + shape_str(indices.shape()));
  const std::vector<int64_t> idx = checked_indices(c, indices, x.dims()[axis]);
  const std::vector<int64_t> xs = strides_of(x.dims()), is = strides_of(indices.dims());
  Tensor out = x;
  visit_type(x.type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto dst = out.mutable_data<T>();
    auto upd = updates.data<T>();
    for (int64_t k = 0; k < indices.size(); ++k) {
      int64_t off = 0, rest = k;
      for (std::size_t d = 0; d < indices.rank(); ++d) {
        int64_t coord = rest / is[d];
        rest %= is[d];
        if (static_cast<int64_t>(d) == axis) coord = idx[k];  // checked_indices made it non-negative
        off += coord * xs[d];
      }
      if (reduction == "add") dst[off] = wrapping_add(dst[off], upd[k]);
      else if (reduction == "mul") dst[off] = wrapping_mul(dst[off], upd[k]);
      else if (reduction == "max") dst[off] = nan_max(dst[off], upd[k]);
      else if (reduction == "min") dst[off] = nan_min(dst[off], upd[k]);
      else dst[off] = upd[k];
    }
  });
  return {out};
}

inline std::vector<Tensor> gather_nd_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  const Tensor& indices = c.in(1);
  const int64_t b = c.attr_int("batch_dims", 0);
  const std::vector<int64_t> idx = as_int64s(indices);
  const int64_t m = indices.rank() ? indices.dims().back() : 0;
  const auto data_rank = static_cast<int64_t>(x.rank());
  if (b < 0 || b >= std::min<int64_t>(data_rank, static_cast<int64_t>(indices.rank())) || m < 1 || m > data_rank - b ||
      !std::equal(x.dims().begin(), x.dims().begin() + b, indices.dims().begin()))
    c.fail("indices of shape " + shape_str(indices.shape()) + " with batch_dims=" + std::to_string(b) +
           " do not address data of shape " + shape_str(x.shape()));
  std::vector<int64_t> dims(indices.dims().begin(), indices.dims().end() - 1);
  for (std::size_t d = b + m; d < x.rank(); ++d) dims.push_back(x.dims()[d]);
  int64_t batch = 1, slice = 1, batch_block = 1;
  for (int64_t d = 0; d < b; ++d) batch *= x.dims()[d];
  for (std::size_t d = b; d < x.rank(); ++d) batch_block *= x.dims()[d];
  for (std::size_t d = b + m; d < x.rank(); ++d) slice *= x.dims()[d];
  const std::vector<int64_t> xs = strides_of(x.dims());
  const int64_t tuples = indices.size() / std::max<int64_t>(m, 1) / std::max<int64_t>(batch, 1);
  Tensor out(x.type(), dims);
  auto dst = out.mutable_bytes();
  const std::size_t s = elem_size(x.type());
  int64_t pos = 0;
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t off = bi * batch_block;
      for (int64_t j = 0; j < m; ++j) {
        int64_t v = idx[(bi * tuples + t) * m + j];
        v = checked_index(c, v, x.dims()[b + j]);
        off += v * xs[b + j];
      }
      std::memcpy(dst.data() + pos * s, x.bytes().data() + off * s, slice * s);
      pos += slice;
    }
  return {out};
}

inline std::vector<Tensor> scatter_nd_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  const Tensor& indices = c.in(1);
  const Tensor& updates = c.in(2);
  const std::string reduction = c.attr_string("reduction", "none");
  const std::vector<int64_t> idx = as_int64s(indices);
  const int64_t m = indices.rank() ? indices.dims().back() : 0;
  if (m < 1 || m > static_cast<int64_t>(x.rank()))
    c.fail("indices of shape " + shape_str(indices.shape()) + " do not address data of shape " + shape_str(x.shape()));
  std::vector<int64_t> expected(indices.dims().begin(), indices.dims().end() - 1);  // updates' shape
  expected.insert(expected.end(), x.dims().begin() + m, x.dims().end());
  if (updates.dims() != expected)
    c.fail("updates of shape " + shape_str(updates.shape()) + " where indices and data ask for " +
           shape_str(make_shape(expected)));
  const std::vector<int64_t> xs = strides_of(x.dims());
  int64_t slice = 1;
  for (std::size_t d = m; d < x.rank(); ++d) slice *= x.dims()[d];
  Tensor out = x;
  visit_type(x.type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto dst = out.mutable_data<T>();
    auto upd = updates.data<T>();
    const int64_t tuples = indices.size() / std::max<int64_t>(m, 1);
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t off = 0;
      for (int64_t j = 0; j < m; ++j) off += checked_index(c, idx[t * m + j], x.dims()[j]) * xs[j];
      for (int64_t e = 0; e < slice; ++e) {
        T& d = dst[off + e];
        const T u = upd[t * slice + e];
        if (reduction == "add") d = wrapping_add(d, u);
        else if (reduction == "mul") d = wrapping_mul(d, u);
        else if (reduction == "max") d = nan_max(d, u);
        else if (reduction == "min") d = nan_min(d, u);
        else d = u;
      }
    }
  });
  return {out};
}

inline std::vector<int64_t> axes_input_or_attr(const KernelContext& c, std::size_t input, int64_t input_opset) {
  if (c.opset >= input_opset) return c.has(input) ? as_int64s(c.in(input)) : std::vector<int64_t>{};
  return c.attr_ints("axes").value_or(std::vector<int64_t>{});
}

inline std::vector<Tensor> squeeze_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  std::vector<int64_t> axes = axes_input_or_attr(c, 1, 13);
  std::vector<bool> drop(x.rank(), false);
  if (axes.empty()) {
    for (std::size_t d = 0; d < x.rank(); ++d) drop[d] = x.dims()[d] == 1;
  } else {
    for (int64_t a : axes) {
      const int64_t d = normalize_axis(a, x.rank());
      if (x.dims()[d] != 1) c.fail("cannot squeeze axis " + std::to_string(a) + " of size " + std::to_string(x.dims()[d]));
      drop[d] = true;
    }
  }
  std::vector<int64_t> dims;
  for (std::size_t d = 0; d < x.rank(); ++d)
    if (!drop[d]) dims.push_back(x.dims()[d]);
  return {x.reshaped(dims)};
}

inline std::vector<Tensor> unsqueeze_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  const std::vector<int64_t> axes = axes_input_or_attr(c, 1, 13);
  const std::size_t rank = x.rank() + axes.size();
  std::vector<bool> added(rank, false);
  for (int64_t a : axes) {
    const int64_t d = normalize_axis(a, rank);
    if (added[d]) c.fail("repeated axis");
    added[d] = true;
  }
  std::vector<int64_t> dims;
  for (std::size_t d = 0, j = 0; d < rank; ++d) dims.push_back(added[d] ? 1 : x.dims()[j++]);
  return {x.reshaped(dims)};
}

inline std::vector<Tensor> expand_kernel(const KernelContext& c) { return {expand_to(c.in(0), as_int64s(c.in(1)))}; }

inline std::vector<Tensor> shape_kernel(const KernelContext& c) {
  const auto& dims = c.in(0).dims();
  const auto r = static_cast<int64_t>(dims.size());
  const auto [start, end] = shape_range(r, c.attr_int("start", 0), c.attr_int("end", r));
  std::vector<int64_t> out(dims.begin() + start, dims.begin() + end);
  return {Tensor::from<int64_t>({static_cast<int64_t>(out.size())}, out)};
}
inline std::vector<Tensor> size_kernel(const KernelContext& c) { return {Tensor::scalar<int64_t>(c.in(0).size())}; }

inline std::vector<Tensor> constant_of_shape_kernel(const KernelContext& c) {
  const std::vector<int64_t> dims = as_int64s(c.in(0));
  if (const auto* a = c.attr("value")) return {expand_to(a->tensor().reshaped({}), dims)};
  return {Tensor(ElemType::Float, dims)};
}

inline std::vector<Tensor> range_kernel(const KernelContext& c) {
  const Tensor& start = c.in(0);
  for (std::size_t i = 1; i < 3; ++i)
    if (c.in(i).type() != start.type())
      c.fail("input " + std::to_string(i) + " is " + std::string(elem_type_name(c.in(i).type())) + ", start " +
             std::string(elem_type_name(start.type())));
  for (std::size_t i = 0; i < 3; ++i)
    if (c.in(i).size() != 1) c.fail("input " + std::to_string(i) + " has " + std::to_string(c.in(i).size()) + " elements, not one");
  return visit_type(start.type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T s = start.data<T>()[0], limit = c.in(1).template data<T>()[0], delta = c.in(2).template data<T>()[0];
    if (delta == T(0)) c.fail("delta is zero");  // ONNX Runtime's error too
    // long double: int64 bounds differ by exactly what they differ by (a double would round 2^63 - 1 and 2^63 - 2
    // to one value)
    const long double count =
        std::ceil((static_cast<long double>(limit) - static_cast<long double>(s)) / static_cast<long double>(delta));
    if (!std::isfinite(count)) c.fail("start, limit and delta give no finite element count");
    const int64_t n = std::max<int64_t>(0, saturate_cast<int64_t>(count));
    Tensor out(start.type(), {n});
    auto dst = out.mutable_data<T>();
    for (int64_t k = 0; k < n; ++k) dst[k] = wrapping_add<T>(s, wrapping_mul<T>(static_cast<T>(k), delta));
    return std::vector<Tensor>{out};
  });
}

inline std::vector<Tensor> tile_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  const std::vector<int64_t> repeats = as_int64s(c.in(1));
  if (repeats.size() != x.rank()) c.fail("repeats must have one entry per dimension");
  std::vector<int64_t> dims(x.rank());
  for (std::size_t d = 0; d < x.rank(); ++d) {
    const std::optional<int64_t> n = checked_mul(x.dims()[d], repeats[d]);
    if (repeats[d] < 0 || !n)
      c.fail("repeats " + std::to_string(repeats[d]) + " of axis " + std::to_string(d) + " (of size " +
             std::to_string(x.dims()[d]) + ") give no valid dimension");
    dims[d] = *n;
  }
  // Each axis's map is at most as long as the whole result (an empty result needs none).
  check_allocatable(x.type(), dims);
  if (dims_element_count(dims) == 0) return {Tensor(x.type(), dims)};
  std::vector<std::vector<int64_t>> maps(x.rank());
  for (std::size_t d = 0; d < x.rank(); ++d) {
    maps[d].resize(dims[d]);
    for (int64_t i = 0; i < dims[d]; ++i) maps[d][i] = i % x.dims()[d];
  }
  return {remap(x, dims, identity_perm(x.rank()), maps)};
}

inline std::vector<Tensor> pad_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  const std::string mode = c.attr_string("mode", "constant");
  std::vector<int64_t> pads;
  double value = 0;
  if (c.opset < 11) {
    pads = c.attr_ints("pads").value_or(std::vector<int64_t>{});
    value = c.attr_float("value", 0.0f);
  } else {
    pads = as_int64s(c.in(1));
    if (c.has(2) && c.in(2).size() > 0) value = scalar_double(c.in(2));
  }
  const std::size_t r = x.rank();
  std::vector<int64_t> axes = identity_perm(r);
  if (c.has(3)) axes = as_int64s(c.in(3));
  if (pads.size() != 2 * axes.size()) c.fail("pads must have 2 entries per padded axis");
  std::vector<int64_t> before(r, 0), after(r, 0);
  for (std::size_t k = 0; k < axes.size(); ++k) {
    const int64_t a = normalize_axis(axes[k], r);
    before[a] = pads[k];
    after[a] = pads[k + axes.size()];
  }
  std::vector<int64_t> dims(r);
  for (std::size_t d = 0; d < r; ++d) {
    const int64_t n = x.dims()[d];
    const std::optional<int64_t> padded = checked_add(n, before[d]), size = padded ? checked_add(*padded, after[d]) : padded;
    if (!size || *size < 0)  // negative pads crop; they cannot take more than the dimension holds
      c.fail("pads " + std::to_string(before[d]) + " and " + std::to_string(after[d]) + " leave axis " +
             std::to_string(d) + " of size " + std::to_string(n) + " with " + (size ? "a negative" : "no int64") + " size");
    dims[d] = *size;
  }
  // Each axis's map is at most as long as the whole result (an empty result needs none).
  check_allocatable(x.type(), dims);
  if (dims_element_count(dims) == 0) return {Tensor(x.type(), dims)};
  std::vector<std::vector<int64_t>> maps(r);
  for (std::size_t d = 0; d < r; ++d) {
    const int64_t n = x.dims()[d];
    maps[d].resize(dims[d]);
    for (int64_t i = 0; i < dims[d]; ++i) {
      int64_t j = 0;
      if (__builtin_sub_overflow(i, before[d], &j)) c.fail("pad " + std::to_string(before[d]) + " overflows int64");
      if (j < 0 || j >= n) {
        if (mode == "edge") j = std::clamp<int64_t>(j, 0, n - 1);
        else if (mode == "reflect") {
          const int64_t period = 2 * (n - 1);
          j = period == 0 ? 0 : ((j % period) + period) % period;
          if (j >= n) j = period - j;
        } else if (mode == "wrap") j = ((j % n) + n) % n;
        else j = -1;
      }
      maps[d][i] = j;
    }
  }
  const Tensor base = filled(x.type(), dims, value);
  return {remap(x, dims, identity_perm(r), maps, &base)};
}

inline std::vector<Tensor> trilu_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  if (x.rank() < 2) c.fail("the input has rank " + std::to_string(x.rank()) + ", at least 2 expected");
  const bool upper = c.attr_int("upper", 1) != 0;
  const int64_t rows = x.dims()[x.rank() - 2], cols = x.dims()[x.rank() - 1];
  // Past -rows or cols, k keeps every column or none: clamped, i + k cannot overflow.
  const int64_t k = std::clamp<int64_t>(c.has(1) ? scalar_int(c.in(1)) : 0, -rows, cols);
  Tensor out(x.type(), x.dims());
  auto dst = out.mutable_bytes();
  const std::size_t s = elem_size(x.type());
  const std::span<const std::byte> src = x.bytes();
  // Row i keeps the columns j >= i + k (upper) or j <= i + k (lower): one run per row.
  for (int64_t row = 0, count = rows * cols == 0 ? 0 : x.size() / cols; row < count; ++row) {
    const int64_t i = row % rows;
    const int64_t first = upper ? std::clamp<int64_t>(i + k, 0, cols) : 0;
    const int64_t last = upper ? cols : std::clamp<int64_t>(i + k + 1, 0, cols);
    const auto at = static_cast<std::size_t>(row * cols + first) * s;
    if (first < last) std::memcpy(dst.data() + at, src.data() + at, static_cast<std::size_t>(last - first) * s);
  }
  return {out};
}

inline std::vector<Tensor> eye_like_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  const auto dtype = static_cast<ElemType>(c.attr_int("dtype", static_cast<int64_t>(x.type())));
  const int64_t k = c.attr_int("k", 0);
  if (x.rank() != 2) c.fail("the input must be 2-D, it has rank " + std::to_string(x.rank()));
  Tensor out = filled(dtype, x.dims(), 0);
  const Tensor one = filled(dtype, {1}, 1);
  auto dst = out.mutable_bytes();
  for (int64_t i = 0; i < x.dims()[0]; ++i)
    if (i + k >= 0 && i + k < x.dims()[1]) copy_element(dst, i * x.dims()[1] + i + k, one.bytes(), 0, elem_size(dtype));
  return {out};
}

inline std::vector<Tensor> compress_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  auto cond = c.in(1).data<bool>();
  const Tensor flat = c.attr("axis") ? x : x.reshaped({x.size()});
  const int64_t axis = c.attr("axis") ? normalize_axis(c.attr_int("axis", 0), x.rank()) : 0;
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < std::min<int64_t>(static_cast<int64_t>(cond.size()), flat.dims()[axis]); ++i)
    if (cond[i]) keep.push_back(i);
  std::vector<int64_t> dims = flat.dims();
  std::vector<std::vector<int64_t>> maps(dims.size());
  for (std::size_t d = 0; d < dims.size(); ++d) maps[d] = iota_map(dims[d]);
  dims[axis] = static_cast<int64_t>(keep.size());
  maps[axis] = keep;
  return {remap(flat, dims, identity_perm(dims.size()), maps)};
}

// DepthToSpace and SpaceToDepth are a reshape, a transpose and a reshape, of a 4-D input whose channels
// (DepthToSpace) or height and width (SpaceToDepth) the blocks divide.
inline int64_t block_size(const KernelContext& c, const Tensor& x) {
  const int64_t b = c.attr_int("blocksize", 0);
  int64_t square = 0;
  if (x.rank() != 4) c.fail("the input has rank " + std::to_string(x.rank()) + ", 4 expected");
  if (b < 1 || __builtin_mul_overflow(b, b, &square))
    c.fail("blocksize " + std::to_string(b) + " is not a block size");
  const bool to_space = c.op_type == Symbol("DepthToSpace");
  if (to_space ? x.dims()[1] % square != 0 : x.dims()[2] % b != 0 || x.dims()[3] % b != 0)
    c.fail("blocksize " + std::to_string(b) + " does not divide the input " +
           shape_str(make_shape(x.dims())) + (to_space ? "'s channels" : "'s height and width"));
  return b;
}
inline std::vector<Tensor> depth_to_space_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  const int64_t b = block_size(c, x);
  const int64_t n = x.dims()[0], ch = x.dims()[1], h = x.dims()[2], w = x.dims()[3];
  const bool crd = c.attr_string("mode", "DCR") == "CRD";
  Tensor t = crd ? transpose(x.reshaped({n, ch / (b * b), b, b, h, w}), {0, 1, 4, 2, 5, 3})
                 : transpose(x.reshaped({n, b, b, ch / (b * b), h, w}), {0, 3, 4, 1, 5, 2});
  return {t.reshaped({n, ch / (b * b), h * b, w * b})};
}
inline std::vector<Tensor> space_to_depth_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  const int64_t b = block_size(c, x);
  const int64_t n = x.dims()[0], ch = x.dims()[1], h = x.dims()[2], w = x.dims()[3];
  Tensor t = transpose(x.reshaped({n, ch, h / b, b, w / b, b}), {0, 3, 5, 1, 2, 4});
  return {t.reshaped({n, ch * b * b, h / b, w / b})};
}

inline std::vector<Tensor> reverse_sequence_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  const std::vector<int64_t> lens = as_int64s(c.in(1));
  const int64_t batch_axis = c.attr_int("batch_axis", 1), time_axis = c.attr_int("time_axis", 0);
  if (x.rank() < 2 || batch_axis + time_axis != 1 || (batch_axis != 0 && batch_axis != 1))
    c.fail("batch_axis and time_axis must be 0 and 1 in some order, on data of rank 2 or more");
  if (static_cast<int64_t>(lens.size()) != x.dims()[batch_axis])
    c.fail(std::to_string(lens.size()) + " sequence lengths for a batch of " + std::to_string(x.dims()[batch_axis]));
  for (int64_t n : lens)
    if (n < 0 || n > x.dims()[time_axis])
      c.fail("sequence length " + std::to_string(n) + " outside [0, " + std::to_string(x.dims()[time_axis]) + "]");
  const std::vector<int64_t> st = strides_of(x.dims());
  Tensor out = x;
  auto dst = out.mutable_bytes();
  const std::size_t s = elem_size(x.type());
  for (int64_t k = 0; k < x.size(); ++k) {
    const int64_t bi = (k / st[batch_axis]) % x.dims()[batch_axis];
    const int64_t t = (k / st[time_axis]) % x.dims()[time_axis];
    if (t < lens[bi]) copy_element(dst, k, x.bytes(), k + (lens[bi] - 1 - 2 * t) * st[time_axis], s);
  }
  return {out};
}

// Inference-mode Dropout: the data passes through, the mask is all true.
inline std::vector<Tensor> dropout_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  const bool training = c.has(2) && c.in(2).data<bool>()[0];
  if (training && c.has(1) && scalar_double(c.in(1)) != 0) c.fail("training mode with a non-zero ratio is random");
  std::vector<Tensor> out{x};
  if (c.n_outputs > 1) out.push_back(filled(ElemType::Bool, x.dims(), 1));
  return out;
}

inline void register_shape_ops(KernelRegistry& r) {
  r.add("Identity", identity_kernel);
  r.add("Constant", constant_kernel, false);
  r.add("Reshape", reshape_kernel);
  r.add("Flatten", flatten_kernel);
  r.add("Transpose", transpose_kernel);
  r.add("Concat", concat_kernel);
  r.add("Split", split_kernel);
  r.add("Slice", slice_kernel);
  r.add("Gather", gather_kernel);
  r.add("GatherElements", gather_elements_kernel);
  r.add("GatherND", gather_nd_kernel);
  r.add("ScatterElements", scatter_elements_kernel);
  r.add("Scatter", scatter_elements_kernel);
  r.add("ScatterND", scatter_nd_kernel);
  r.add("Squeeze", squeeze_kernel);
  r.add("Unsqueeze", unsqueeze_kernel);
  r.add("Expand", expand_kernel);
  r.add("Shape", shape_kernel, false);
  r.add("Size", size_kernel, false);
  r.add("ConstantOfShape", constant_of_shape_kernel, false);
  r.add("Range", range_kernel);
  r.add("Tile", tile_kernel);
  r.add("Pad", pad_kernel);
  r.add("Trilu", trilu_kernel);
  r.add("EyeLike", eye_like_kernel, false);
  r.add("Compress", compress_kernel);
  r.add("DepthToSpace", depth_to_space_kernel);
  r.add("SpaceToDepth", space_to_depth_kernel);
  r.add("ReverseSequence", reverse_sequence_kernel);
  r.add("Dropout", dropout_kernel);
}

}  // namespace xexp::eval::kernels
