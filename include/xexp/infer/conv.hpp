#pragma once
// Sliding windows: Conv, ConvInteger, QLinearConv, ConvTranspose, MaxPool, AveragePool, LpPool, the
// global pools and com.microsoft FusedConv (a Conv followed by an activation). Inputs are (N, C, D1, ...,
// Dn); the spatial output sizes follow the ONNX operator definitions: auto_pad (SAME_UPPER, SAME_LOWER,
// VALID, NOTSET), pads, strides, dilations and ceil_mode. A spatial size computed from a symbolic one
// keeps it where the window does (stride 1 and padding that makes up for the kernel: a 3x3 Conv with
// pads 1 keeps "height"), and is otherwise spelled from it ("(height-1)//2+1"), so that two branches
// downsampling one input alike have one size (a residual sum after a strided block). With ceil_mode,
// SAME padding and a stride, or from an unknown size, it is unknown.
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "xexp/core/checked_int.hpp"
#include "xexp/infer/rule_table.hpp"

namespace xexp::infer {

// Window arithmetic on the sizes and attributes a file gives (a stride or a pad can be anything up to
// int64): a result past int64 is an error, never a wrapped size.
inline int64_t window_size(InferContext& c, std::optional<int64_t> v, std::size_t axis) {
  if (!v) c.fail("a window size on axis " + std::to_string(axis) + " overflows int64", c.input_name(0));
  return *v;
}

// An INTS attribute with one value per spatial axis (`count` of them), or `fallback` repeated.
inline std::vector<int64_t> per_axis_attr(InferContext& c, std::string_view name, std::size_t count, int64_t fallback) {
  auto v = c.attr_ints(name);
  if (!v) return std::vector<int64_t>(count, fallback);
  if (v->size() != count)
    c.fail(std::string(name) + " has " + std::to_string(v->size()) + " values for " + std::to_string(count) + " spatial axes");
  for (int64_t x : *v)
    if (x < (fallback == 0 ? 0 : 1)) c.fail(std::string(name) + " holds " + std::to_string(x));
  return *v;
}

inline std::vector<int64_t> effective_kernel(InferContext& c, const std::vector<int64_t>& kernel,
                                             const std::vector<int64_t>& dilations) {
  std::vector<int64_t> eff(kernel.size());
  for (std::size_t i = 0; i < kernel.size(); ++i) {
    const std::optional<int64_t> span = checked_mul(kernel[i] - 1, dilations[i]);
    eff[i] = window_size(c, span ? checked_add(*span, 1) : std::nullopt, 2 + i);
  }
  return eff;
}

// The pads attribute, or the ones auto_pad implies: SAME_UPPER puts the odd one at the end,
// SAME_LOWER at the beginning. `total_pad(i)` is the padding SAME needs on axis i (nullopt: the input
// size it depends on is unknown).
template <class TotalPad>
std::vector<int64_t> window_pads(InferContext& c, std::size_t n, TotalPad&& total_pad) {
  if (c.attr("pads")) return per_axis_attr(c, "pads", 2 * n, 0);
  std::vector<int64_t> pads(2 * n, 0);
  const std::string_view auto_pad = c.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET" || auto_pad == "VALID") return pads;
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") c.fail("unknown auto_pad " + std::string(auto_pad));
  for (std::size_t i = 0; i < n; ++i) {
    const std::optional<int64_t> total = total_pad(i);
    if (!total) continue;
    const int64_t small = *total / 2, big = *total - small;
    pads[i] = auto_pad == "SAME_UPPER" ? small : big;
    pads[i + n] = auto_pad == "SAME_UPPER" ? big : small;
  }
  return pads;
}

// The size a window of span `eff`, `padding` in all and `stride` leaves of symbolic size `in`, floor
// rounding: floor((in + padding - eff) / stride) + 1, spelled as Python would compute it.
inline Dim strided_window_dim(const Dim& in, int64_t padding, int64_t eff, int64_t stride) {
  const std::string_view name = in.symbol().view();
  const bool compound = name.find_first_of("+-*/") != std::string_view::npos;
  std::string expr = compound ? "(" + std::string(name) + ")" : std::string(name);
  const int64_t shift = padding - eff;
  if (shift != 0) expr = "(" + expr + (shift > 0 ? "+" : "") + std::to_string(shift) + ")";
  if (stride != 1) expr += "//" + std::to_string(stride);
  return Dim::symbolic(expr + "+1");
}

// The spatial output sizes of Conv and the pools for input `x` (rank >= 2) and this kernel.
inline Shape window_output_dims(InferContext& c, const Shape& input, const std::vector<int64_t>& kernel) {
  Shape x = input;
  for (Dim& d : x) d = c.constraints().canonical(d);  // sizes bound since the input was typed
  const std::size_t n = x.size() - 2;
  if (kernel.size() != n)
    c.fail("the kernel has " + std::to_string(kernel.size()) + " axes, the input " + std::to_string(n) + " spatial axes",
           c.input_name(0));
  for (int64_t k : kernel)
    if (k < 1) c.fail("kernel size " + std::to_string(k));
  const std::vector<int64_t> strides = per_axis_attr(c, "strides", n, 1);
  const std::vector<int64_t> eff = effective_kernel(c, kernel, per_axis_attr(c, "dilations", n, 1));
  const std::vector<int64_t> pads = window_pads(c, n, [&](std::size_t i) -> std::optional<int64_t> {
    // Output ceil(size / stride): the padding that takes.
    int64_t residual = 0;
    if (strides[i] > 1) {
      if (!x[2 + i].is_static()) return std::nullopt;
      residual = x[2 + i].value() % strides[i];
    }
    return std::max<int64_t>(0, eff[i] - (residual == 0 ? strides[i] : residual));
  });
  const bool ceil_mode = c.attr_int("ceil_mode", 0) != 0;
  // SAME padding over a symbolic size with a stride has pads that depend on the size: left unknown.
  const bool pads_known = c.attr("pads") || c.attr_string("auto_pad", "NOTSET").substr(0, 4) != "SAME";
  Shape out;
  for (std::size_t i = 0; i < n; ++i) {
    const Dim& in = x[2 + i];
    const int64_t padding = window_size(c, checked_add(pads[i], pads[i + n]), 2 + i), s = strides[i];
    if (!in.is_static()) {
      if (s == 1 && padding == eff[i] - 1)
        out.push_back(in);
      else
        out.push_back(in.is_symbolic() && !ceil_mode && pads_known
                          ? strided_window_dim(in, padding, eff[i], s)
                          : Dim());
      continue;
    }
    const std::optional<int64_t> padded = checked_add(in.value(), padding);
    const int64_t span = window_size(c, padded ? checked_add(*padded, -eff[i]) : std::nullopt, 2 + i);
    if (span < 0)
      c.fail("the kernel spans " + std::to_string(eff[i]) + " on axis " + std::to_string(2 + i) + " of size " +
                 std::to_string(in.value()) + " padded by " + std::to_string(padding),
             c.input_name(0));
    int64_t size = (ceil_mode ? span / s + (span % s != 0) : span / s) + 1;
    // With ceil_mode, a window starting in the end padding is dropped ((size - 1) * s <= span fits).
    if (ceil_mode) {
      const std::optional<int64_t> last_start = checked_mul(size - 1, s);
      if (!last_start || *last_start >= *padded - pads[i + n]) --size;
    }
    out.push_back(Dim(size));
  }
  return out;
}

// kernel_shape, or the weight's spatial sizes; nullopt when they are not static.
inline std::optional<std::vector<int64_t>> kernel_shape(InferContext& c, const Shape& w) {
  if (auto k = c.attr_ints("kernel_shape")) return k;
  std::vector<int64_t> kernel;
  for (std::size_t i = 2; i < w.size(); ++i) {
    if (!w[i].is_static()) return std::nullopt;
    kernel.push_back(w[i].value());
  }
  return kernel;
}

// X must be (N, C, D1, ...) to slide a window over it.
inline const Shape* window_input(InferContext& c) {
  if (!c.shape(0)) return nullptr;
  if (c.shape(0)->size() < 3)
    c.fail("the input has rank " + std::to_string(c.shape(0)->size()) + ", expected (N, C, D1, ...)", c.input_name(0));
  return &*c.shape(0);
}

// Conv and its quantized forms: (N, M, ...) for X (input 0) and a weight (M, C / group, k1, ...) (input
// `w_index`), with the bias at `b_index` when the op has one.
inline void infer_conv_like(InferContext& c, std::size_t w_index, std::optional<std::size_t> b_index, ElemType type) {
  const Shape* x = window_input(c);
  if (!x) return c.set_output(0, type);
  if (!c.shape(w_index)) return c.set_output_rank(0, type, x->size());
  const Shape& w = *c.shape(w_index);
  if (w.size() != x->size())
    c.fail("the weight has rank " + std::to_string(w.size()) + ", the input " + std::to_string(x->size()),
           c.input_name(w_index));
  const int64_t group = c.attr_int("group", 1);
  if (group < 1) c.fail("group is " + std::to_string(group));
  // Channels: C = group * (C / group).
  if (w[1].is_static()) {
    const Dim channels = c.constraints().canonical((*x)[1]);
    const int64_t expected = window_size(c, checked_mul(w[1].value(), group), 1);
    if (channels.is_static() && channels.value() != expected)
      c.fail("the input has " + channels.str() + " channels, the weight expects " + std::to_string(w[1].value()) +
                 " x group " + std::to_string(group),
             c.input_name(w_index));
    c.unify((*x)[1], Dim(expected));
  }
  if (b_index && c.has_input(*b_index) && c.shape(*b_index)) {
    const Shape& b = *c.shape(*b_index);
    if (b.size() != 1 || (b[0].is_static() && w[0].is_static() && b[0].value() != w[0].value()))
      c.fail("the bias has shape " + shape_str(b) + " for " + w[0].str() + " output channels", c.input_name(*b_index));
    c.unify(b[0], w[0]);
  }
  Shape out{(*x)[0], w[0]};
  const std::optional<std::vector<int64_t>> kernel = kernel_shape(c, w);
  if (!kernel) {
    out.resize(x->size());
    return c.set_output(0, type, out);
  }
  const Shape spatial = window_output_dims(c, *x, *kernel);
  out.insert(out.end(), spatial.begin(), spatial.end());
  c.set_output(0, type, out);
}

// Conv, com.microsoft FusedConv: X, W, B.
inline void infer_conv(InferContext& c) { infer_conv_like(c, 1, 2, c.type(0)); }
// ConvInteger: X, W, zero points, no bias; int32 out. QLinearConv: X, its scale and zero point, W, its scale and
// zero point, Y's scale and zero point (Y's type), B. Ours run before ONNX's inference, whose shared
// Conv rule reads past its vectors on a weight whose rank is not the input's.
inline void infer_conv_integer(InferContext& c) { infer_conv_like(c, 1, std::nullopt, ElemType::Int32); }
inline void infer_qlinear_conv(InferContext& c) { infer_conv_like(c, 3, 8, c.type(7)); }

// ConvTranspose: (N, group * M / group, ...) for a weight (C, M / group, k1, ...). The output sizes
// are output_shape when given, else stride * (size - 1) + output_padding + kernel - pads.
inline void infer_conv_transpose(InferContext& c) {
  const ElemType type = c.type(0);
  const Shape* x = window_input(c);
  if (!x) return c.set_output(0, type);
  if (!c.shape(1)) return c.set_output_rank(0, type, x->size());
  const Shape& w = *c.shape(1);
  const std::size_t n = x->size() - 2;
  if (w.size() != x->size())
    c.fail("the weight has rank " + std::to_string(w.size()) + ", the input " + std::to_string(x->size()), c.input_name(1));
  const int64_t group = c.attr_int("group", 1);
  if (group < 1) c.fail("group is " + std::to_string(group));
  const Dim channels = c.constraints().canonical((*x)[1]), weight_channels = c.constraints().canonical(w[0]);
  if (channels.is_static() && weight_channels.is_static() && channels.value() != weight_channels.value())
    c.fail("the input has " + channels.str() + " channels, the weight " + weight_channels.str(), c.input_name(1));
  c.unify((*x)[1], w[0]);
  Shape out{(*x)[0], w[1].is_static() ? Dim(window_size(c, checked_mul(w[1].value(), group), 1)) : group == 1 ? w[1] : Dim()};
  const std::optional<std::vector<int64_t>> kernel = kernel_shape(c, w);
  if (!kernel) {
    out.resize(x->size());
    return c.set_output(0, type, out);
  }
  if (kernel->size() != n) c.fail("the kernel has " + std::to_string(kernel->size()) + " axes for " + std::to_string(n));
  if (auto output_shape = c.attr_ints("output_shape")) {
    // Spatial sizes, or (ONNX Runtime accepts it) the whole shape.
    if (output_shape->size() != n && output_shape->size() != n + 2)
      c.fail("output_shape has " + std::to_string(output_shape->size()) + " values for " + std::to_string(n) + " spatial axes");
    out.insert(out.end(), output_shape->end() - static_cast<std::ptrdiff_t>(n), output_shape->end());
    return c.set_output(0, type, out);
  }
  const std::vector<int64_t> strides = per_axis_attr(c, "strides", n, 1);
  const std::vector<int64_t> eff = effective_kernel(c, *kernel, per_axis_attr(c, "dilations", n, 1));
  const std::vector<int64_t> output_padding = per_axis_attr(c, "output_padding", n, 0);
  const std::vector<int64_t> pads = window_pads(c, n, [&](std::size_t i) -> std::optional<int64_t> {
    return std::max<int64_t>(0, eff[i] - strides[i]);
  });
  for (std::size_t i = 0; i < n; ++i) {
    const Dim& in = (*x)[2 + i];
    const std::optional<int64_t> grown = checked_add(output_padding[i], eff[i]);
    const std::optional<int64_t> trimmed = grown ? checked_add(*grown, -pads[i]) : std::nullopt;
    const int64_t extra = window_size(c, trimmed ? checked_add(*trimmed, -pads[i + n]) : std::nullopt, 2 + i);
    if (!in.is_static()) {
      out.push_back(strides[i] == 1 && extra == 1 ? in : Dim());
      continue;
    }
    const std::optional<int64_t> stretched = checked_mul(strides[i], in.value() - 1);
    const int64_t size = window_size(c, stretched ? checked_add(*stretched, extra) : std::nullopt, 2 + i);
    if (size < 0) c.fail("output size " + std::to_string(size) + " on axis " + std::to_string(2 + i), c.input_name(0));
    out.push_back(Dim(size));
  }
  c.set_output(0, type, out);
}

// MaxPool (and its Indices output), AveragePool, LpPool: (N, C, ...), kernel_shape required.
inline void infer_pool(InferContext& c) {
  const ElemType type = c.type(0);
  const Shape* x = window_input(c);
  if (!x) {
    c.set_output(0, type);
    c.set_output(1, ElemType::Int64);
    return;
  }
  auto kernel = c.attr_ints("kernel_shape");
  if (!kernel) c.fail("kernel_shape is required");
  Shape out{(*x)[0], (*x)[1]};
  const Shape spatial = window_output_dims(c, *x, *kernel);
  out.insert(out.end(), spatial.begin(), spatial.end());
  c.set_output(0, type, out);
  c.set_output(1, ElemType::Int64, out);
}

// GlobalAveragePool, GlobalMaxPool: (N, C, 1, ..., 1). (GlobalLpPool is left to ONNX's inference.)
inline void infer_global_pool(InferContext& c) {
  const Shape* x = window_input(c);
  if (!x) return c.set_output(0, c.type(0));
  Shape out(x->size(), Dim(1));
  out[0] = (*x)[0];
  out[1] = (*x)[1];
  c.set_output(0, c.type(0), out);
}

inline void add_conv_rules(RuleTable& t) {
  t.add({"Conv"}, infer_conv);
  t.add({"ConvInteger"}, infer_conv_integer);
  t.add({"QLinearConv"}, infer_qlinear_conv);
  t.add(kMsDomain, {"FusedConv"}, infer_conv);
  t.add({"ConvTranspose"}, infer_conv_transpose);
  t.add({"MaxPool", "AveragePool", "LpPool"}, infer_pool);
  t.add({"GlobalAveragePool", "GlobalMaxPool"}, infer_global_pool);
}

}  // namespace xexp::infer
