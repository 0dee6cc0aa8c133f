#pragma once
// Neural-network kernels: Softmax family, normalizations (LayerNormalization and the RMS variants share
// one loop), BatchNormalization, InstanceNormalization, Conv (im2col + GEMM) and pooling.
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>

#include "xexp/eval/kernel.hpp"
#include "xexp/eval/kernels/matmul.hpp"
#include "xexp/eval/tensor_util.hpp"

namespace xexp::eval::kernels {

enum class SoftmaxKind { Softmax, LogSoftmax, Hardmax };

// Softmax over `n` contiguous-by-`inner` elements for each of `outer` groups.
inline Tensor softmax(const Tensor& x, int64_t outer, int64_t n, int64_t inner, SoftmaxKind kind) {
  return visit_float_type(x.type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Tensor out(x.type(), x.dims());
    auto src = x.data<T>();
    auto dst = out.mutable_data<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        auto at = [&](int64_t j) { return (o * n + j) * inner + i; };
        int64_t arg = 0;
        T mx = -std::numeric_limits<T>::infinity();
        for (int64_t j = 0; j < n; ++j)
          if (src[at(j)] > mx) mx = src[at(j)], arg = j;
        if (kind == SoftmaxKind::Hardmax) {
          for (int64_t j = 0; j < n; ++j) dst[at(j)] = j == arg ? T(1) : T(0);
          continue;
        }
        double sum = 0;
        for (int64_t j = 0; j < n; ++j) sum += std::exp(static_cast<double>(src[at(j)] - mx));
        const double log_sum = std::log(sum);
        for (int64_t j = 0; j < n; ++j) {
          const double shifted = static_cast<double>(src[at(j)] - mx);
          dst[at(j)] = static_cast<T>(kind == SoftmaxKind::Softmax ? std::exp(shifted) / sum : shifted - log_sum);
        }
      }
    return out;
  });
}
// Before opset 13 the input is flattened to 2-D at `axis` (default 1); from 13 on, one axis (default -1).
inline Kernel softmax_kernel(SoftmaxKind kind) {
  return [kind](const KernelContext& c) -> std::vector<Tensor> {
    const Tensor& x = c.in(0);
    const bool legacy = c.domain.empty() && c.opset < 13;
    const int64_t axis = normalize_axis(c.attr_int("axis", legacy ? 1 : -1), x.rank());
    int64_t outer = 1, n = 1, inner = 1;
    for (int64_t d = 0; d < static_cast<int64_t>(x.rank()); ++d) {
      const int64_t v = x.dims()[d];
      if (d < axis) outer *= v;
      else if (d == axis || legacy) n *= v;
      else inner *= v;
    }
    return {softmax(x, outer, n, inner, kind)};
  };
}

struct NormalizationOptions {
  int64_t axis = -1;
  double epsilon = 1e-5;
  bool rms = false;                    // no mean subtraction (SimplifiedLayerNormalization, RMSNormalization)
  ElemType stash = ElemType::Float;    // stage one's precision: the statistics and the normalized value
  ElemType out = ElemType::Undefined;  // Y's type; Undefined: x's
  // ONNX's function bodies cast the normalized value to this type (X's), then scale and shift in Y's
  // type; Undefined: scaled and shifted in the stash type and rounded once to Y's (ONNX Runtime's kernels).
  ElemType normalized_as = ElemType::Undefined;
};
struct NormalizationResult {
  Tensor y, mean, inv_std;  // mean and inv_std in the stash type
};
// A value rounded as `type` stores it. Each step below is computed in double and rounded so: for +, -,
// *, / and sqrt that is the correctly rounded result in float, float16 or bfloat16 (double has more
// than twice their precision), the arithmetic the function bodies prescribe.
using Rounding = double (*)(double);
inline Rounding rounding_to(ElemType type) {
  switch (type) {
    case ElemType::Float:
      return [](double v) { return static_cast<double>(static_cast<float>(v)); };
    case ElemType::Float16:
      return
          [](double v) { return static_cast<double>(half_to_float(float_to_half(static_cast<float>(v)))); };
    case ElemType::BFloat16:
      return [](double v) {
        return static_cast<double>(bfloat16_to_float(float_to_bfloat16(static_cast<float>(v))));
      };
    case ElemType::Double:
      return [](double v) { return v; };
    default:
      throw Error("stash type " + std::string(elem_type_name(type)) + " is not a floating-point type");
  }
}
// Normalizes over the dimensions from `axis` on; scale and bias broadcast to those dimensions. Sums are
// accumulated in double and each mean rounded once to the stash type. The variance is the mean squared
// deviation, as LayerNormalization's summary writes it: its function body's E[x^2] - E[x]^2 is the
// same value, computed with cancellation.
inline NormalizationResult normalize_trailing(const Tensor& x_in, const Tensor* scale, const Tensor* bias, const NormalizationOptions& o) {
  const int64_t axis = normalize_axis(o.axis, x_in.rank());
  int64_t outer = 1, n = 1;
  std::vector<int64_t> stat_dims = x_in.dims(), inner_dims;
  for (int64_t d = 0; d < static_cast<int64_t>(x_in.rank()); ++d) {
    if (d < axis)
      outer *= x_in.dims()[d];
    else {
      n *= x_in.dims()[d];
      inner_dims.push_back(x_in.dims()[d]);
      stat_dims[d] = 1;
    }
  }
  const ElemType out = o.out == ElemType::Undefined ? x_in.type() : o.out;
  const Rounding u = rounding_to(o.stash);
  const Rounding second = rounding_to(o.normalized_as == ElemType::Undefined ? o.stash : out);
  const Rounding cast_normalized = o.normalized_as == ElemType::Undefined ? u : rounding_to(o.normalized_as);
  auto doubles = [&](const Tensor* t) {
    return t ? cast_tensor(expand_to(*t, inner_dims), ElemType::Double) : Tensor(ElemType::Double, {0});
  };
  const Tensor x_double = cast_tensor(x_in, ElemType::Double), scale_double = doubles(scale),
               bias_double = doubles(bias);
  auto x = x_double.data<double>();
  auto s = scale_double.data<double>(), b = bias_double.data<double>();
  const double eps = u(static_cast<float>(o.epsilon));  // Cast(FloatEpsilon, stash_type)
  std::vector<double> y(x.size()), means(outer), inv_stds(outer), xu(n);
  for (int64_t g = 0; g < outer; ++g) {
    double mean = 0, sq = 0;
    for (int64_t j = 0; j < n; ++j) mean += xu[j] = u(x[g * n + j]);  // Cast(X, stash_type)
    mean = o.rms ? 0.0 : u(mean / static_cast<double>(n));
    for (int64_t j = 0; j < n; ++j) sq += u(u(xu[j] - mean) * u(xu[j] - mean));
    const double std_dev = u(std::sqrt(u(u(sq / static_cast<double>(n)) + eps)));
    means[g] = mean;
    inv_stds[g] = u(1.0 / std_dev);
    for (int64_t j = 0; j < n; ++j) {
      double v = cast_normalized(u(u(xu[j] - mean) / std_dev));
      if (scale) v = second(v * s[j]);
      if (bias) v = second(v + b[j]);
      y[g * n + j] = v;
    }
  }
  auto tensor = [](std::vector<int64_t> dims, const std::vector<double>& v, ElemType type) {
    return cast_tensor(Tensor::from<double>(std::move(dims), v), type);
  };
  return {tensor(x_in.dims(), y, out), tensor(stat_dims, means, o.stash),
          tensor(stat_dims, inv_stds, o.stash)};
}

// The stash type attribute: `allowed` lists the types the op's definition accepts.
inline ElemType stash_type(const KernelContext& c, std::initializer_list<ElemType> allowed) {
  const auto type = static_cast<ElemType>(c.attr_int("stash_type", static_cast<int64_t>(ElemType::Float)));
  if (std::find(allowed.begin(), allowed.end(), type) == allowed.end())
    throw Error("stash_type " + std::to_string(static_cast<int64_t>(type)) + " is not allowed");
  return type;
}

// LayerNormalization-17's function body: stage one in stash_type (float or bfloat16), Normalized cast
// to X's type, then scaled and shifted in X's type; Mean and InvStdDev have the stash type.
inline std::vector<Tensor> layer_norm_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  const NormalizationOptions o{.axis = c.attr_int("axis", -1),
                               .epsilon = c.attr_float("epsilon", 1e-5f),
                               .stash = stash_type(c, {ElemType::Float, ElemType::BFloat16}),
                               .normalized_as = x.type()};
  auto r = normalize_trailing(x, c.has(1) ? &c.in(1) : nullptr, c.has(2) ? &c.in(2) : nullptr, o);
  return {r.y, r.mean, r.inv_std};
}
// RMSNormalization-23's function body: stage one in stash_type, Normalized cast to X's type, then
// multiplied by scale; Y has scale's type (V).
inline std::vector<Tensor> rms_norm_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  const NormalizationOptions o{
      .axis = c.attr_int("axis", -1),
      .epsilon = c.attr_float("epsilon", 1e-5f),
      .rms = true,
      .stash = stash_type(c, {ElemType::Float, ElemType::BFloat16, ElemType::Float16, ElemType::Double}),
      .out = c.in(1).type(),
      .normalized_as = x.type()};
  return {normalize_trailing(x, &c.in(1), nullptr, o).y};
}
// ONNX Runtime's SimplifiedLayerNormalization (its contrib schema, in the default domain; the evaluator
// also reads it in com.microsoft) has no function body; its kernel computes in float (in double for a
// double X) and scales before the one rounding to Y's type, scale's (V); inv_std_var has stash_type.
inline std::vector<Tensor> simplified_layer_norm_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  const NormalizationOptions o{.axis = c.attr_int("axis", -1),
                               .epsilon = c.attr_float("epsilon", 1e-5f),
                               .rms = true,
                               .stash = x.type() == ElemType::Double ? ElemType::Double : ElemType::Float,
                               .out = c.in(1).type()};
  auto r = normalize_trailing(x, &c.in(1), nullptr, o);
  return {r.y, cast_tensor(r.inv_std, stash_type(c, {ElemType::Float, ElemType::Double}))};
}

// Inference mode normalizes with the running statistics; training mode with the batch's own, and also
// returns the updated running mean and variance.
inline std::vector<Tensor> batch_norm_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  const bool training = c.attr_int("training_mode", 0) != 0;
  const double eps = c.attr_float("epsilon", 1e-5f), momentum = c.attr_float("momentum", 0.9f);
  const std::vector<double> scale = as_doubles(c.in(1)), bias = as_doubles(c.in(2));
  std::vector<double> mean = as_doubles(c.in(3)), var = as_doubles(c.in(4));
  const int64_t ch = x.rank() > 1 ? x.dims()[1] : 1;
  const char* names[] = {"scale", "B", "input_mean", "input_var"};
  const std::size_t sizes[] = {scale.size(), bias.size(), mean.size(), var.size()};
  for (std::size_t k = 0; k < 4; ++k)
    if (sizes[k] != static_cast<std::size_t>(ch))
      c.fail(std::string(names[k]) + " has " + std::to_string(sizes[k]) + " elements for " +
             std::to_string(ch) + " channels");
  int64_t inner = 1;
  for (std::size_t d = 2; d < x.rank(); ++d) inner *= x.dims()[d];
  std::vector<double> running_mean = mean, running_var = var;
  if (training) {
    const std::vector<double> v = as_doubles(x);
    const double count = static_cast<double>(x.size() / std::max<int64_t>(ch, 1));
    std::vector<double> sum(ch, 0), sq(ch, 0);
    for (int64_t k = 0; k < x.size(); ++k) sum[(k / inner) % ch] += v[k];
    for (int64_t ci = 0; ci < ch; ++ci) mean[ci] = sum[ci] / count;
    for (int64_t k = 0; k < x.size(); ++k) sq[(k / inner) % ch] += (v[k] - mean[(k / inner) % ch]) * (v[k] - mean[(k / inner) % ch]);
    for (int64_t ci = 0; ci < ch; ++ci) {
      var[ci] = sq[ci] / count;
      running_mean[ci] = running_mean[ci] * momentum + mean[ci] * (1 - momentum);
      running_var[ci] = running_var[ci] * momentum + var[ci] * (1 - momentum);
    }
  }
  return visit_float_type(x.type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Tensor out(x.type(), x.dims());
    auto src = x.data<T>();
    auto dst = out.mutable_data<T>();
    for (int64_t k = 0; k < x.size(); ++k) {
      const int64_t ci = (k / inner) % ch;
      dst[k] = static_cast<T>((src[k] - mean[ci]) / std::sqrt(var[ci] + eps) * scale[ci] + bias[ci]);
    }
    auto stats = [&](const std::vector<double>& v) {
      Tensor t(c.in(3).type(), c.in(3).dims());
      auto d = t.mutable_data<T>();
      for (int64_t ci = 0; ci < ch; ++ci) d[ci] = static_cast<T>(v[ci]);
      return t;
    };
    return std::vector<Tensor>{out, stats(running_mean), stats(running_var)};
  });
}

inline std::vector<Tensor> instance_norm_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  const int64_t n = x.dims()[0], ch = x.dims()[1];
  // normalize each (n, c) slice over its spatial dims, then apply the per-channel scale and bias
  auto r = normalize_trailing(x.reshaped({n * ch, x.size() / std::max<int64_t>(n * ch, 1)}), nullptr, nullptr,
                              {.axis = 1, .epsilon = c.attr_float("epsilon", 1e-5f), .stash = x.type()});
  std::vector<int64_t> cdims(x.rank(), 1);
  cdims[1] = ch;
  const Tensor scale = c.in(1).reshaped(cdims), bias = c.in(2).reshaped(cdims);
  const Tensor y = r.y.reshaped(x.dims());
  return visit_float_type(x.type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Tensor scaled = broadcast_binary<T, T, T>(y, scale, [](T a, T b) { return a * b; });
    return std::vector<Tensor>{broadcast_binary<T, T, T>(scaled, bias, [](T a, T b) { return a + b; })};
  });
}

// ---- windows (Conv and pooling) --------------------------------------------------------------------
struct WindowGeometry {
  std::vector<int64_t> in, kernel, strides, dilations, pads_begin, pads_end, out;
};
// The window of a Conv or pooling node over the `spatial` axes, its attributes checked (a fuzzed
// MaxPool gave two pads for two axes): one kernel size, stride and dilation per axis, each at least 1;
// two pads per axis, at least 0; an output of at least one element per axis. A pooling window must
// reach into the input, its pads smaller than the kernel, as ONNX Runtime requires.
inline WindowGeometry window_geometry(const KernelContext& c, const std::vector<int64_t>& spatial,
                                      const std::vector<int64_t>& kernel, bool ceil_mode, bool pooling) {
  const std::size_t k = spatial.size();
  auto checked = [&](const char* name, std::vector<int64_t> v, std::size_t count, int64_t low) {
    if (v.size() != count)
      c.fail(std::string(name) + " has " + std::to_string(v.size()) + " values, " + std::to_string(count) +
             " expected for " + std::to_string(k) + " spatial axes");
    for (int64_t e : v)
      if (e < low)
        c.fail(std::string(name) + " holds " + std::to_string(e) + ", below " + std::to_string(low));
    return v;
  };
  WindowGeometry g;
  g.in = spatial;
  g.kernel = checked("kernel_shape", kernel, k, 1);
  g.strides = checked("strides", c.attr_ints("strides").value_or(std::vector<int64_t>(k, 1)), k, 1);
  g.dilations = checked("dilations", c.attr_ints("dilations").value_or(std::vector<int64_t>(k, 1)), k, 1);
  const std::vector<int64_t> pads =
      checked("pads", c.attr_ints("pads").value_or(std::vector<int64_t>(2 * k, 0)), 2 * k, 0);
  const std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  g.pads_begin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(k));
  g.pads_end.assign(pads.begin() + static_cast<std::ptrdiff_t>(k), pads.end());
  g.out.resize(k);
  for (std::size_t d = 0; d < k; ++d) {
    if (pooling && (g.pads_begin[d] >= kernel[d] || g.pads_end[d] >= kernel[d]))
      c.fail("pads (" + std::to_string(g.pads_begin[d]) + ", " + std::to_string(g.pads_end[d]) +
             ") must be smaller than the kernel (" + std::to_string(kernel[d]) + ") on spatial axis " +
             std::to_string(d));
    int64_t eff = 0, padded = 0;
    if (__builtin_mul_overflow(g.dilations[d], kernel[d] - 1, &eff) || __builtin_add_overflow(eff, 1, &eff) ||
        __builtin_add_overflow(spatial[d], g.pads_begin[d], &padded) ||
        __builtin_add_overflow(padded, g.pads_end[d], &padded))
      c.fail("the window overflows on spatial axis " + std::to_string(d));
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      g.out[d] = spatial[d] == 0 ? 0 : (spatial[d] - 1) / g.strides[d] + 1;  // ceil, without overflow
      const int64_t total = std::max<int64_t>(0, (g.out[d] - 1) * g.strides[d] + eff - spatial[d]);
      g.pads_begin[d] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      g.pads_end[d] = total - g.pads_begin[d];
      continue;
    }
    if (auto_pad == "VALID") {
      g.pads_begin[d] = g.pads_end[d] = 0;
      padded = spatial[d];
    }
    const int64_t span = padded - eff;
    if (span < 0)
      c.fail("a window of " + std::to_string(eff) + " does not fit spatial axis " + std::to_string(d) + " (" +
             std::to_string(padded) + " with its pads)");
    g.out[d] = span / g.strides[d] + 1;
    // with ceil_mode, one more window where it starts inside the input or the left padding
    if (int64_t start = 0; ceil_mode && span % g.strides[d] != 0 &&
                           !__builtin_mul_overflow(g.out[d], g.strides[d], &start) &&
                           start < spatial[d] + g.pads_begin[d])
      ++g.out[d];
  }
  return g;
}
// Calls visit(out_index, in_index or -1 when in the padding, kernel_index) over every window position.
template <class Visit>
void for_each_window(const WindowGeometry& g, Visit&& visit) {
  const std::size_t k = g.in.size();
  const int64_t n_out = dims_element_count(g.out), n_ker = dims_element_count(g.kernel);
  const std::vector<int64_t> in_strides = strides_of(g.in), out_strides = strides_of(g.out), ker_strides = strides_of(g.kernel);
  for (int64_t o = 0; o < n_out; ++o)
    for (int64_t w = 0; w < n_ker; ++w) {
      int64_t at = 0;
      bool inside = true;
      for (std::size_t d = 0; d < k; ++d) {
        const int64_t od = (o / out_strides[d]) % g.out[d], wd = (w / ker_strides[d]) % g.kernel[d];
        const int64_t pos = od * g.strides[d] - g.pads_begin[d] + wd * g.dilations[d];
        if (pos < 0 || pos >= g.in[d]) {
          inside = false;
          break;
        }
        at += pos * in_strides[d];
      }
      visit(o, inside ? at : int64_t{-1}, w);
    }
}

// Conv's operands fit one another: X (N, C, spatial...), W (M, C / group, kernel...) with `group`
// dividing C and M, kernel_shape (when given) W's spatial sizes, B (when given) M values.
inline void check_conv_operands(const KernelContext& c, const Tensor& x, const Tensor& w, int64_t group) {
  if (x.rank() < 3) c.fail("X has rank " + std::to_string(x.rank()) + ", at least 3 expected");
  if (w.rank() != x.rank())
    c.fail("W has rank " + std::to_string(w.rank()) + ", X rank " + std::to_string(x.rank()));
  const int64_t ch = x.dims()[1], m = w.dims()[0];
  if (group < 1 || ch % group != 0 || m % group != 0 || w.dims()[1] != ch / group)
    c.fail("W " + shape_str(make_shape(w.dims())) + " does not fit X " + shape_str(make_shape(x.dims())) +
           " in " + std::to_string(group) + " group(s)");
  const std::vector<int64_t> w_kernel(w.dims().begin() + 2, w.dims().end());
  if (c.attr_ints("kernel_shape").value_or(w_kernel) != w_kernel)
    c.fail("kernel_shape differs from W's spatial sizes " + shape_str(make_shape(w_kernel)));
  if (c.has(2) && (c.in(2).rank() != 1 || c.in(2).dims()[0] != m))
    c.fail("B " + shape_str(make_shape(c.in(2).dims())) + " does not hold one value per output channel (" +
           std::to_string(m) + ")");
}

inline std::vector<Tensor> conv_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  const Tensor& w = c.in(1);
  const int64_t group = c.attr_int("group", 1);
  check_conv_operands(c, x, w, group);
  const int64_t n = x.dims()[0], ch = x.dims()[1], m = w.dims()[0];
  const std::vector<int64_t> spatial(x.dims().begin() + 2, x.dims().end());
  const std::vector<int64_t> kernel(w.dims().begin() + 2, w.dims().end());
  const WindowGeometry g = window_geometry(c, spatial, kernel, false, false);
  const int64_t cg = ch / group, mg = m / group, n_in = dims_element_count(spatial), n_out = dims_element_count(g.out), n_ker = dims_element_count(kernel);
  std::vector<int64_t> dims{n, m};
  dims.insert(dims.end(), g.out.begin(), g.out.end());
  return visit_float_type(x.type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Tensor out(x.type(), dims);
    auto src = x.data<T>();
    auto wt = w.data<T>();
    auto dst = out.mutable_data<T>();
    std::vector<T> col(static_cast<std::size_t>(cg * n_ker * n_out)), scratch;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t gi = 0; gi < group; ++gi) {
        std::fill(col.begin(), col.end(), T(0));
        for (int64_t ci = 0; ci < cg; ++ci) {
          const T* plane = src.data() + (b * ch + gi * cg + ci) * n_in;
          T* rows = col.data() + ci * n_ker * n_out;
          for_each_window(g, [&](int64_t o, int64_t at, int64_t k) {
            if (at >= 0) rows[k * n_out + o] = plane[at];
          });
        }
        gemm<T>(mg, n_out, cg * n_ker, wt.data() + gi * mg * cg * n_ker, false, col.data(), false,
                dst.data() + (b * m + gi * mg) * n_out, T(1), scratch);
      }
    if (c.has(2)) {
      auto bias = c.in(2).template data<T>();
      for (int64_t k = 0; k < out.size(); ++k) dst[k] += bias[(k / n_out) % m];
    }
    return std::vector<Tensor>{out};
  });
}

inline Kernel pool_kernel(bool is_max) {
  return [is_max](const KernelContext& c) -> std::vector<Tensor> {
    const Tensor& x = c.in(0);
    if (x.rank() < 3) c.fail("the input has rank " + std::to_string(x.rank()) + ", at least 3 expected");
    const std::vector<int64_t> spatial(x.dims().begin() + 2, x.dims().end());
    const auto kernel = c.attr_ints("kernel_shape");
    if (!kernel) c.fail("kernel_shape is required");
    const WindowGeometry g = window_geometry(c, spatial, *kernel, c.attr_int("ceil_mode", 0) != 0, true);
    const bool count_pad = c.attr_int("count_include_pad", 0) != 0;
    const bool column_major = c.attr_int("storage_order", 0) != 0;  // MaxPool's Indices output
    const std::vector<int64_t> in_strides = strides_of(spatial);
    auto to_column_major = [&](int64_t at) {
      int64_t out = 0, scale = 1;
      for (std::size_t d = 0; d < spatial.size(); ++d) {
        out += ((at / in_strides[d]) % spatial[d]) * scale;
        scale *= spatial[d];
      }
      return out;
    };
    const int64_t planes = x.dims()[0] * x.dims()[1], n_in = dims_element_count(spatial), n_out = dims_element_count(g.out);
    std::vector<int64_t> dims{x.dims()[0], x.dims()[1]};
    dims.insert(dims.end(), g.out.begin(), g.out.end());
    Tensor indices(ElemType::Int64, dims);
    auto idx = indices.mutable_data<int64_t>();
    // count_include_pad counts the explicit padding only, not positions past it
    WindowGeometry padded = g;
    for (std::size_t d = 0; d < spatial.size(); ++d) padded.in[d] = spatial[d] + g.pads_begin[d] + g.pads_end[d];
    for (std::size_t d = 0; d < spatial.size(); ++d) padded.pads_begin[d] = 0;
    Tensor y = visit_type(x.type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      Tensor out(x.type(), dims);
      auto src = x.data<T>();
      auto dst = out.mutable_data<T>();
      std::vector<double> acc(n_out), count(n_out, 0);
      std::vector<int64_t> arg(n_out, -1);
      if (count_pad && !is_max) for_each_window(padded, [&](int64_t o, int64_t at, int64_t) { count[o] += at >= 0; });
      for (int64_t p = 0; p < planes; ++p) {
        const T* plane = src.data() + p * n_in;
        std::fill(acc.begin(), acc.end(), is_max ? -std::numeric_limits<double>::infinity() : 0.0);
        std::fill(arg.begin(), arg.end(), -1);
        if (!count_pad || is_max) std::fill(count.begin(), count.end(), 0.0);
        for_each_window(g, [&](int64_t o, int64_t at, int64_t) {
          if (at < 0) return;
          const double v = static_cast<double>(plane[at]);
          if (is_max) {
            // NaN propagates (numpy's max over the window); the first NaN stays
            if (arg[o] < 0 || v > acc[o] || (v != v && acc[o] == acc[o])) acc[o] = v, arg[o] = at;
          } else {
            acc[o] += v;
            if (!count_pad) count[o] += 1;
          }
        });
        for (int64_t o = 0; o < n_out; ++o) {
          dst[p * n_out + o] = static_cast<T>(is_max ? acc[o] : acc[o] / std::max(count[o], 1.0));
          idx[p * n_out + o] = p * n_in + (column_major ? to_column_major(arg[o]) : arg[o]);
        }
      }
      return out;
    });
    if (c.n_outputs > 1) return {y, indices};
    return {y};
  };
}

inline Kernel global_pool_kernel(bool is_max) {
  return [is_max](const KernelContext& c) -> std::vector<Tensor> {
    const Tensor& x = c.in(0);
    if (x.rank() < 2) c.fail("the input has rank " + std::to_string(x.rank()) + ", at least 2 expected");
    const int64_t planes = x.dims()[0] * x.dims()[1], n = x.size() / std::max<int64_t>(planes, 1);
    std::vector<int64_t> dims(x.rank(), 1);
    dims[0] = x.dims()[0];
    dims[1] = x.dims()[1];
    return visit_float_type(x.type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      Tensor out(x.type(), dims);
      auto src = x.data<T>();
      auto dst = out.mutable_data<T>();
      for (int64_t p = 0; p < planes; ++p) {
        double acc = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
        for (int64_t j = 0; j < n; ++j) acc = is_max ? nan_max<double>(acc, src[p * n + j]) : acc + src[p * n + j];
        dst[p] = static_cast<T>(is_max ? acc : acc / static_cast<double>(n));
      }
      return std::vector<Tensor>{out};
    });
  };
}

inline std::vector<Tensor> lrn_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  const double alpha = c.attr_float("alpha", 1e-4f), beta = c.attr_float("beta", 0.75f), bias = c.attr_float("bias", 1.0f);
  const int64_t size = c.attr_int("size", 1), ch = x.dims()[1];
  int64_t inner = 1;
  for (std::size_t d = 2; d < x.rank(); ++d) inner *= x.dims()[d];
  return visit_float_type(x.type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Tensor out(x.type(), x.dims());
    auto src = x.data<T>();
    auto dst = out.mutable_data<T>();
    for (int64_t k = 0; k < x.size(); ++k) {
      const int64_t ci = (k / inner) % ch, base = k - ci * inner;
      double sq = 0;
      for (int64_t j = std::max<int64_t>(0, ci - (size - 1) / 2); j <= std::min(ch - 1, ci + size / 2); ++j) sq += double(src[base + j * inner]) * src[base + j * inner];
      dst[k] = static_cast<T>(src[k] / std::pow(bias + alpha / static_cast<double>(size) * sq, beta));
    }
    return std::vector<Tensor>{out};
  });
}

inline void register_nn(KernelRegistry& r) {
  r.add("Softmax", softmax_kernel(SoftmaxKind::Softmax));
  r.add("LogSoftmax", softmax_kernel(SoftmaxKind::LogSoftmax));
  r.add("Hardmax", softmax_kernel(SoftmaxKind::Hardmax));
  // without the float16 widening: each computes in its own precision and types its outputs
  r.add("LayerNormalization", layer_norm_kernel, false);
  r.add("SimplifiedLayerNormalization", simplified_layer_norm_kernel, false);
  r.add("com.microsoft", "SimplifiedLayerNormalization", simplified_layer_norm_kernel, false);
  r.add("RMSNormalization", rms_norm_kernel, false);
  r.add("BatchNormalization", batch_norm_kernel);
  r.add("InstanceNormalization", instance_norm_kernel);
  r.add("Conv", conv_kernel);
  r.add("MaxPool", pool_kernel(true));
  r.add("AveragePool", pool_kernel(false));
  r.add("GlobalMaxPool", global_pool_kernel(true));
  r.add("GlobalAveragePool", global_pool_kernel(false));
  r.add("LRN", lrn_kernel);
}

}  // namespace xexp::eval::kernels
