#pragma once
// Reductions (ReduceSum ... ReduceLogSumExp) with keepdims and noop_with_empty_axes, ArgMax, ArgMin.
// The axes come from the attribute before opset 13 (ReduceSum) or 18 (the others), from input 1 after.
#include <cmath>
#include <limits>
#include <span>
#include <vector>

#include "xexp/eval/kernel.hpp"
#include "xexp/eval/tensor_util.hpp"

namespace xexp::eval::kernels {

enum class ReduceKind { Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare };

struct ReducePlan {
  std::vector<int64_t> out_dims;        // with keepdims applied
  std::vector<int64_t> kept_strides;    // per input dim: stride in the output, 0 when reduced
  int64_t group = 1;                    // input elements per output element
};

inline ReducePlan plan_reduction(const std::vector<int64_t>& dims, std::vector<int64_t> axes, bool keepdims, bool noop_if_empty) {
  ReducePlan p;
  if (axes.empty()) {
    // noop_with_empty_axes reduces nothing but still applies the element function: ReduceSumSquare
    // squares, ReduceL1 takes the absolute value, ReduceLogSum the log (as the specification says)
    if (noop_if_empty) {
      p.out_dims = dims;
      p.kept_strides = strides_of(dims);
      return p;
    }
    axes = identity_perm(dims.size());
  }
  std::vector<bool> reduced(dims.size(), false);
  for (int64_t a : axes) reduced[normalize_axis(a, dims.size())] = true;
  std::vector<int64_t> kept_dims;  // output dims without the reduced ones, in order
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (reduced[d]) {
      p.group *= dims[d];
      if (keepdims) p.out_dims.push_back(1);
    } else {
      kept_dims.push_back(dims[d]);
      p.out_dims.push_back(dims[d]);
    }
  }
  const std::vector<int64_t> ks = strides_of(kept_dims);
  p.kept_strides.assign(dims.size(), 0);
  for (std::size_t d = 0, j = 0; d < dims.size(); ++d)
    if (!reduced[d]) p.kept_strides[d] = ks[j++];
  return p;
}

inline std::vector<int64_t> reduction_axes(const KernelContext& c, int64_t axes_input_opset) {
  if (c.opset >= axes_input_opset) return c.has(1) ? as_int64s(c.in(1)) : std::vector<int64_t>{};
  return c.attr_ints("axes").value_or(std::vector<int64_t>{});
}

// log(sum(exp(x))) as max + log(sum(exp(x - max))) in double: exact for one element, no overflow of
// exp for large inputs, and no truncation of exp(x) to an integer for integer inputs.
template <class T>
Tensor log_sum_exp(std::span<const T> src, const std::vector<int64_t>& dims, const ReducePlan& p, Tensor& out) {
  std::vector<double> top(static_cast<std::size_t>(out.size()), -std::numeric_limits<double>::infinity());
  std::vector<double> sum(top.size(), 0.0);
  for_each_strided<1>(dims, {p.kept_strides}, [&](int64_t k, const std::array<int64_t, 1>& o) {
    const auto v = static_cast<double>(src[k]);
    double& m = top[static_cast<std::size_t>(o[0])];
    if (v > m || v != v) m = v;
  });
  for_each_strided<1>(dims, {p.kept_strides}, [&](int64_t k, const std::array<int64_t, 1>& o) {
    const double m = top[static_cast<std::size_t>(o[0])];
    if (std::isfinite(m)) sum[static_cast<std::size_t>(o[0])] += std::exp(static_cast<double>(src[k]) - m);
  });
  auto dst = out.mutable_data<T>();
  for (std::size_t k = 0; k < top.size(); ++k)
    dst[k] = saturate_cast<T>(std::isfinite(top[k]) ? top[k] + std::log(sum[k]) : top[k]);
  return out;
}

inline Kernel reduce(ReduceKind kind) {
  return [kind](const KernelContext& c) -> std::vector<Tensor> {
    const Tensor& x = c.in(0);
    const int64_t axes_opset = kind == ReduceKind::Sum ? 13 : 18;
    const ReducePlan p = plan_reduction(x.dims(), reduction_axes(c, axes_opset), c.attr_int("keepdims", 1) != 0,
                                        c.attr_int("noop_with_empty_axes", 0) != 0);
    return visit_type(x.type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
      Tensor out(x.type(), p.out_dims);
      auto src = x.data<T>();
      if (kind == ReduceKind::LogSumExp) return std::vector<Tensor>{log_sum_exp<T>(src, x.dims(), p, out)};
      std::vector<Acc> acc(static_cast<std::size_t>(out.size()));
      Acc init = 0;
      if (kind == ReduceKind::Prod) init = 1;
      if (kind == ReduceKind::Max) init = std::is_floating_point_v<T> ? -std::numeric_limits<Acc>::infinity() : std::numeric_limits<Acc>::lowest();
      if (kind == ReduceKind::Min) init = std::is_floating_point_v<T> ? std::numeric_limits<Acc>::infinity() : std::numeric_limits<Acc>::max();
      std::fill(acc.begin(), acc.end(), init);
      // Integer sums and products wrap, as fixed-width arithmetic does in the runtimes.
      auto abs = [](Acc v) -> Acc {
        if constexpr (std::is_integral_v<Acc>) return v < 0 ? static_cast<Acc>(uint64_t{0} - static_cast<uint64_t>(v)) : v;
        else return v < 0 ? -v : v;
      };
      for_each_strided<1>(x.dims(), {p.kept_strides}, [&](int64_t k, const std::array<int64_t, 1>& o) {
        const Acc v = static_cast<Acc>(src[k]);
        Acc& a = acc[o[0]];
        switch (kind) {
          case ReduceKind::Sum: case ReduceKind::Mean: case ReduceKind::LogSum: a = wrapping_add(a, v); break;
          case ReduceKind::Max: a = nan_max(v, a); break;
          case ReduceKind::Min: a = nan_min(v, a); break;
          case ReduceKind::Prod: a = wrapping_mul(a, v); break;
          case ReduceKind::L1: a = wrapping_add(a, abs(v)); break;
          case ReduceKind::L2: case ReduceKind::SumSquare: a = wrapping_add(a, wrapping_mul(v, v)); break;
          case ReduceKind::LogSumExp: break;  // log_sum_exp
        }
      });
      auto dst = out.mutable_data<T>();
      for (int64_t k = 0; k < out.size(); ++k) {
        double a = static_cast<double>(acc[k]);
        switch (kind) {
          case ReduceKind::Mean: a /= static_cast<double>(p.group); break;
          case ReduceKind::L2: a = std::sqrt(a); break;
          case ReduceKind::LogSum: a = std::log(a); break;
          default: break;
        }
        dst[k] = saturate_cast<T>(a);
      }
      return std::vector<Tensor>{out};
    });
  };
}

inline Kernel arg_reduce(bool is_max) {
  return [is_max](const KernelContext& c) -> std::vector<Tensor> {
    const Tensor& x = c.in(0);
    const int64_t axis = normalize_axis(c.attr_int("axis", 0), x.rank());
    const bool keepdims = c.attr_int("keepdims", 1) != 0, last = c.attr_int("select_last_index", 0) != 0;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x.dims()[d];
    for (std::size_t d = axis + 1; d < x.rank(); ++d) inner *= x.dims()[d];
    const int64_t n = x.dims()[axis];
    std::vector<int64_t> dims = x.dims();
    if (keepdims) dims[axis] = 1;
    else dims.erase(dims.begin() + axis);
    Tensor out(ElemType::Int64, dims);
    auto dst = out.mutable_data<int64_t>();
    visit_type(x.type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      auto src = x.data<T>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          int64_t best = 0;
          for (int64_t j = 1; j < n; ++j) {
            const T v = src[(o * n + j) * inner + i], b = src[(o * n + best) * inner + i];
            const bool better = is_max ? (last ? v >= b : v > b) : (last ? v <= b : v < b);
            if (better) best = j;
          }
          dst[o * inner + i] = best;
        }
    });
    return {out};
  };
}

inline void register_reduce(KernelRegistry& r) {
  r.add("ReduceSum", reduce(ReduceKind::Sum));
  r.add("ReduceMean", reduce(ReduceKind::Mean));
  r.add("ReduceMax", reduce(ReduceKind::Max));
  r.add("ReduceMin", reduce(ReduceKind::Min));
  r.add("ReduceProd", reduce(ReduceKind::Prod));
  r.add("ReduceL1", reduce(ReduceKind::L1));
  r.add("ReduceL2", reduce(ReduceKind::L2));
  r.add("ReduceLogSum", reduce(ReduceKind::LogSum));
  r.add("ReduceLogSumExp", reduce(ReduceKind::LogSumExp));
  r.add("ReduceSumSquare", reduce(ReduceKind::SumSquare));
  r.add("ArgMax", arg_reduce(true));
  r.add("ArgMin", arg_reduce(false));
}

}  // namespace xexp::eval::kernels
