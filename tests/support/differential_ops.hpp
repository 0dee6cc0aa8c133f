#pragma once
// The case generator of every op the evaluator supports (see differential_cases.hpp): which inputs,
// shapes and attribute variants each op gets. Values that make a C++ kernel's behaviour undefined
// (signed overflow in arithmetic, an integer division by zero, a shift by the type's width or more, a
// float cast to an integer it does not fit) are not drawn: ONNX leaves them undefined too.
#include <string>
#include <vector>

#include "support/differential_cases.hpp"

namespace xexp::testing::differential {

namespace ops_detail {

using F = std::function<void(Draw&, ElemType, Case&)>;

inline const std::vector<ElemType> kFloats{ElemType::Float, ElemType::Double, ElemType::Float16};
inline const std::vector<ElemType> kFloat{ElemType::Float};

// Elementwise op on one input; `attrs` draws its attributes.
inline F unary(bool extremes, std::function<void(Draw&, Case&)> attrs = {}) {
  return [=](Draw& d, ElemType t, Case& c) {
    c.in(d.values(t, d.shape(0, 4), extremes));
    if (attrs) attrs(d, c);
  };
}

// Two inputs of type t broadcasting (numpy rules), in either order.
inline void broadcast_pair(Draw& d, ElemType t, Case& c, bool extremes) {
  Dims a = d.shape(0, 4), b = d.partner(a);
  if (d.chance(0.5)) std::swap(a, b);
  c.in(d.values(t, a, extremes));
  c.in(d.values(t, b, extremes));
}

inline F binary(bool extremes) {
  return [=](Draw& d, ElemType t, Case& c) { broadcast_pair(d, t, c, extremes); };
}

// Integer division and modulo: a divisor that is never zero, no lowest / -1.
inline F divisor_safe(std::function<void(Draw&, ElemType, Case&)> attrs) {
  return [=](Draw& d, ElemType t, Case& c) {
    broadcast_pair(d, t, c, false);
    if (is_integer(t)) {
      Tensor& b = *c.inputs[1];
      Tensor fixed = eval::cast_tensor(b, ElemType::Int64);
      auto v = fixed.mutable_data<int64_t>();
      for (int64_t& x : v)
        if (x == 0) x = 3;
      b = eval::cast_tensor(fixed, t);
    }
    if (attrs) attrs(d, t, c);
  };
}

// 1 to 3 inputs broadcasting together.
inline F variadic(bool extremes) {
  return [=](Draw& d, ElemType t, Case& c) {
    const Dims a = d.shape(0, 4);
    const int64_t n = d.pick(1, 3);
    for (int64_t k = 0; k < n; ++k) c.in(d.values(t, k == 0 ? a : d.partner(a), extremes));
    if (d.chance(0.5)) std::reverse(c.inputs.begin(), c.inputs.end());
  };
}

// Axes of a rank-r tensor for a reduction: a random subset (negative at random), sometimes none.
inline Dims axis_subset(Draw& d, int64_t r) {
  Dims axes;
  for (int64_t a = 0; a < r; ++a)
    if (d.chance(0.4)) axes.push_back(d.chance(0.5) ? a - r : a);
  if (d.chance(0.05)) axes.push_back(r);  // out of range: both runtimes must refuse
  return axes;
}

inline F reduce(bool extremes, bool sum) {
  return [=](Draw& d, ElemType t, Case& c) {
    const Dims shape = d.shape(0, 4);
    c.opset = d.one_of<int64_t>({13, 18});
    c.in(d.values(t, shape, extremes));
    const Dims axes = axis_subset(d, static_cast<int64_t>(shape.size()));
    const bool axes_input = c.opset >= 18 || sum;
    if (!axes.empty() || d.chance(0.5)) {
      if (axes_input)
        c.in(Draw::ints1(axes));
      else if (!axes.empty())
        c.attr_ints("axes", axes);
    }
    if (d.chance(0.5)) c.attr_int("keepdims", d.pick(0, 1));
    if (axes_input && d.chance(0.3)) c.attr_int("noop_with_empty_axes", d.pick(0, 1));
  };
}

inline F arg_reduce() {
  return [](Draw& d, ElemType t, Case& c) {
    const Dims shape = d.shape(1, 4, 4, 0.03);
    c.in(d.values(t, shape, true, false));
    c.attr_int("axis", d.axis(static_cast<int64_t>(shape.size())));
    if (d.chance(0.5)) c.attr_int("keepdims", d.pick(0, 1));
    if (d.chance(0.5)) c.attr_int("select_last_index", d.pick(0, 1));
  };
}

inline F softmax_like() {
  return [](Draw& d, ElemType t, Case& c) {
    c.opset = d.one_of<int64_t>({11, 13});
    const Dims shape = d.shape(1, 4);
    c.in(d.values(t, shape, false, d.chance(0.3)));
    if (d.chance(0.7)) c.attr_int("axis", d.axis(static_cast<int64_t>(shape.size())));
  };
}

// A loss over scores or log-probabilities (N, C, d...): targets (N, d...) in [0, C) of int64 or int32,
// positive weights per class at random, a reduction, and an ignore_index that some targets take (a
// class or -100), the first target never (a mean over no target divides zero by zero).
inline F loss(bool log_prob_output) {
  return [=](Draw& d, ElemType t, Case& c) {
    c.opset = d.one_of<int64_t>({13, 18});
    const int64_t classes = d.pick(1, 5);
    Dims shape{d.pick(1, 3), classes}, targets{shape[0]};
    for (int64_t extra = d.pick(0, 2); extra > 0; --extra) {
      shape.push_back(d.pick(1, 3));
      targets.push_back(shape.back());
    }
    c.in(d.values(t, shape, false, false));
    Dims labels(static_cast<std::size_t>(dims_element_count(targets)));
    for (int64_t& label : labels) label = d.pick(0, classes - 1);
    if (d.chance(0.5)) {
      const int64_t ignored = classes > 1 && d.chance(0.5) ? d.pick(1, classes - 1) : -100;
      labels[0] = 0;
      for (std::size_t k = 1; k < labels.size(); ++k)
        if (d.chance(0.3)) labels[k] = ignored;
      c.attr_int("ignore_index", ignored);
    }
    const bool narrow = d.chance(0.3);
    c.in(Draw::ints(targets, labels, narrow));
    if (d.chance(0.5)) c.in(d.positive(t, {classes}));
    if (d.chance(0.8)) c.attr_string("reduction", d.one_of<std::string>({"mean", "sum", "none"}));
    if (log_prob_output && d.chance(0.5)) c.outputs = 2;
  };
}

// Pairs (x, scale, bias...) of a normalization over the trailing axes from `axis`.
inline Dims trailing(const Dims& shape, int64_t axis) {
  if (axis < 0) axis += static_cast<int64_t>(shape.size());
  return Dims(shape.begin() + axis, shape.end());
}

// A convolution-like input [N, C, spatial...] with `spatial` dimensions.
inline Dims nc_spatial(Draw& d, int64_t spatial, int64_t c, int64_t min_dim = 1) {
  Dims shape{d.pick(1, 2), c};
  for (int64_t k = 0; k < spatial; ++k) shape.push_back(d.pick(min_dim, 6));
  return shape;
}

// Kernel, strides, pads, dilations of a pooling or convolution over `in` (spatial part).
struct Window {
  Dims kernel, strides, pads, dilations;
};
inline Window window(Draw& d, const Dims& in, bool dilate) {
  Window w;
  const std::size_t n = in.size() - 2;
  for (std::size_t k = 0; k < n; ++k) {
    w.kernel.push_back(d.pick(1, std::min<int64_t>(3, in[k + 2])));
    w.strides.push_back(d.pick(1, 2));
    w.dilations.push_back(dilate ? d.pick(1, 2) : 1);
  }
  for (int half = 0; half < 2; ++half)
    for (std::size_t k = 0; k < n; ++k) w.pads.push_back(d.pick(0, w.kernel[k] - 1));
  for (std::size_t k = 0; k < n; ++k)  // the dilated kernel must fit the padded input
    while (w.dilations[k] > 1 &&
           (w.kernel[k] - 1) * w.dilations[k] + 1 > in[k + 2] + w.pads[k] + w.pads[k + n])
      --w.dilations[k];
  return w;
}

inline void window_attrs(Draw& d, Case& c, const Window& w, bool dilations) {
  c.attr_ints("kernel_shape", w.kernel);
  if (d.chance(0.7)) c.attr_ints("strides", w.strides);
  if (d.chance(0.2)) {
    c.attr_string("auto_pad", d.one_of<const char*>({"SAME_UPPER", "SAME_LOWER", "VALID"}));
  } else if (d.chance(0.7)) {
    c.attr_ints("pads", w.pads);
  }
  if (dilations && d.chance(0.5)) c.attr_ints("dilations", w.dilations);
}

inline F conv(bool fused) {
  return [=](Draw& d, ElemType t, Case& c) {
    const int64_t group = d.one_of<int64_t>({1, 1, 2});
    const int64_t cin = group * d.pick(1, 2), cout = group * d.pick(1, 2);
    const Dims x = nc_spatial(d, d.pick(1, 2), cin);
    const Window w = window(d, x, true);
    Dims wshape{cout, cin / group};
    wshape.insert(wshape.end(), w.kernel.begin(), w.kernel.end());
    c.in(d.values(t, x, false, false));
    c.in(d.values(t, wshape, false, false));
    if (d.chance(0.5)) c.in(d.values(t, {cout}, false, false));
    window_attrs(d, c, w, true);
    if (group > 1) c.attr_int("group", group);
    if (fused) {
      const char* act =
          d.one_of<const char*>({"Relu", "Tanh", "Sigmoid", "LeakyRelu", "Clip", "HardSigmoid"});
      c.attr_string("activation", act);
      if (std::string(act) == "LeakyRelu")
        c.attr(ir::Attribute::make_floats(Symbol("activation_params"), {0.1f}));
      if (std::string(act) == "Clip")
        c.attr(ir::Attribute::make_floats(Symbol("activation_params"), {-0.5f, 0.75f}));
      if (std::string(act) == "HardSigmoid")
        c.attr(ir::Attribute::make_floats(Symbol("activation_params"), {0.3f, 0.4f}));
    }
  };
}

inline F pool(bool max) {
  return [=](Draw& d, ElemType t, Case& c) {
    const int64_t channels = d.pick(1, 2), spatial = d.pick(1, 2);
    const Dims x = nc_spatial(d, spatial, channels);
    const Window w = window(d, x, max);
    c.in(d.values(t, x, max, max));
    window_attrs(d, c, w, max);
    if (d.chance(0.4)) c.attr_int("ceil_mode", 1);
    if (!max && d.chance(0.5)) c.attr_int("count_include_pad", d.pick(0, 1));
    if (max && d.chance(0.3)) c.outputs = 2;
  };
}

inline F global_pool() {
  return [](Draw& d, ElemType t, Case& c) {
    const int64_t channels = d.pick(1, 3), spatial = d.pick(1, 3);
    c.in(d.values(t, nc_spatial(d, spatial, channels), false));
  };
}

inline void gemm_like(Draw& d, ElemType t, Case& c, bool fused) {
  const int64_t m = d.pick(1, 4), k = d.pick(0, 4), n = d.pick(1, 4);
  const bool ta = d.chance(0.5), tb = d.chance(0.5);
  c.in(d.values(t, ta ? Dims{k, m} : Dims{m, k}, false, false));
  c.in(d.values(t, tb ? Dims{n, k} : Dims{k, n}, false, false));
  if (d.chance(0.7)) c.in(d.values(t, d.one_of<Dims>({{}, {n}, {1, n}, {m, 1}, {m, n}, {1}}), false, false));
  if (ta) c.attr_int("transA", 1);
  if (tb) c.attr_int("transB", 1);
  if (d.chance(0.5)) c.attr_float("alpha", static_cast<float>(d.one_of<double>({0.5, -2.0, 1.5})));
  if (d.chance(0.5)) c.attr_float("beta", static_cast<float>(d.one_of<double>({0.0, 0.5, 2.0})));
  if (fused) c.attr_string("activation", d.one_of<const char*>({"Relu", "Tanh", "Sigmoid"}));
}

// MatMul operands: ranks 1 to 4, batch dimensions broadcasting.
inline void matmul_operands(Draw& d, ElemType t, Case& c, int64_t min_rank) {
  const int64_t m = d.pick(1, 3), k = d.pick(0, 3), n = d.pick(1, 3);
  const int64_t ra = d.pick(min_rank, 4), rb = d.pick(min_rank, 4);
  Dims batch = d.shape(0, 2, 3, 0.02);
  Dims a = ra == 1 ? Dims{k} : Dims{m, k}, b = rb == 1 ? Dims{k} : Dims{k, n};
  auto with_batch = [&](Dims x, int64_t r) {
    if (r <= 2) return x;
    Dims bd = batch;
    while (static_cast<int64_t>(bd.size()) > r - 2) bd.erase(bd.begin());
    for (int64_t& v : bd)
      if (d.chance(0.3)) v = 1;
    bd.insert(bd.end(), x.begin(), x.end());
    return bd;
  };
  c.in(d.values(t, with_batch(a, ra), false, false));
  c.in(d.values(t, with_batch(b, rb), false, false));
}

// Shape ops: ------------------------------------------------------------------------------------

inline void reshape(Draw& d, ElemType t, Case& c) {
  const Dims x = d.shape(0, 4);
  c.in(d.values(t, x, true));
  Dims target = x;
  if (target.size() >= 2 && d.chance(0.5)) {  // merge two neighbours
    const auto at = static_cast<std::size_t>(d.pick(0, static_cast<int64_t>(target.size()) - 2));
    target[at] *= target[at + 1];
    target.erase(target.begin() + static_cast<std::ptrdiff_t>(at) + 1);
  }
  if (d.chance(0.3)) target.insert(target.begin() + d.pick(0, static_cast<int64_t>(target.size())), 1);
  std::reverse(target.begin(), target.end());
  const bool any_zero = std::find(target.begin(), target.end(), 0) != target.end();
  const bool allowzero = any_zero && d.chance(0.5);
  if (!target.empty() && !any_zero && d.chance(0.4))
    target[static_cast<std::size_t>(d.pick(0, static_cast<int64_t>(target.size()) - 1))] = -1;
  for (std::size_t k = 0; k < target.size() && k < x.size(); ++k)
    if (!allowzero && target[k] == x[k] && d.chance(0.3)) target[k] = 0;  // copy the input's dimension
  c.in(Draw::ints1(target));
  if (allowzero) c.attr_int("allowzero", 1);
}

inline void slice(Draw& d, ElemType t, Case& c) {
  const Dims x = d.shape(1, 4, 5);
  const auto r = static_cast<int64_t>(x.size());
  c.in(d.values(t, x, true));
  constexpr int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  const bool narrow = d.chance(0.3);
  Dims starts, ends, axes, steps;
  for (int64_t a : d.permutation(r)) {
    if (!d.chance(0.6) && !axes.empty()) continue;
    const int64_t n = x[static_cast<std::size_t>(a)];
    auto bound = [&] {
      return d.chance(0.15) ? d.one_of<int64_t>({lo, hi, lo + 1, hi - 1}) : d.pick(-n - 3, n + 3);
    };
    int64_t step =
        d.chance(0.1) ? d.one_of<int64_t>({lo, hi, -hi}) : d.one_of<int64_t>({1, 1, 2, 3, -1, -1, -2, -3});
    if (narrow) {
      auto clamp32 = [](int64_t v) { return std::clamp<int64_t>(v, INT32_MIN, INT32_MAX); };
      starts.push_back(clamp32(bound()));
      ends.push_back(clamp32(bound()));
      step = clamp32(step);
    } else {
      starts.push_back(bound());
      ends.push_back(bound());
    }
    steps.push_back(step);
    axes.push_back(d.chance(0.5) ? a - r : a);
  }
  c.in(Draw::ints1(starts, narrow));
  c.in(Draw::ints1(ends, narrow));
  const bool sorted_axes = std::is_sorted(axes.begin(), axes.end()) && (axes.empty() || axes.front() == 0) &&
                           axes.size() == static_cast<std::size_t>(axes.back() + 1);
  const bool default_steps = std::all_of(steps.begin(), steps.end(), [](int64_t s) { return s == 1; });
  if (sorted_axes && d.chance(0.5)) {
    if (!default_steps || d.chance(0.5)) {
      c.none();
      c.in(Draw::ints1(steps, narrow));
    }
    return;
  }
  c.in(Draw::ints1(axes, narrow));
  if (!default_steps || d.chance(0.5)) c.in(Draw::ints1(steps, narrow));
}

inline void gather(Draw& d, ElemType t, Case& c) {
  const Dims x = d.shape(1, 3, 4, 0.03);
  const auto r = static_cast<int64_t>(x.size());
  const int64_t axis = d.axis(r);
  const int64_t n = x[static_cast<std::size_t>(axis < 0 ? axis + r : axis)];
  c.in(d.values(t, x, true));
  const Dims ishape = n == 0 ? Dims{0} : d.shape(0, 2, 3, 0.05);
  const bool narrow = d.chance(0.3);
  c.in(Draw::ints(ishape, d.indices(static_cast<int64_t>(dims_element_count(ishape)), n), narrow));
  c.attr_int("axis", axis);
}

inline void gather_elements(Draw& d, ElemType t, Case& c) {
  const Dims x = d.shape(1, 3, 4, 0.03);
  const auto r = static_cast<int64_t>(x.size());
  const int64_t axis = d.axis(r);
  const auto ax = static_cast<std::size_t>(axis < 0 ? axis + r : axis);
  Dims ishape = x;
  for (std::size_t k = 0; k < ishape.size(); ++k)
    ishape[k] = k == ax ? (x[k] == 0 ? 0 : d.pick(1, 4)) : d.pick(std::min<int64_t>(x[k], 1), x[k]);
  c.in(d.values(t, x, true));
  const bool narrow = d.chance(0.3);
  c.in(Draw::ints(ishape, d.indices(static_cast<int64_t>(dims_element_count(ishape)), x[ax]), narrow));
  c.attr_int("axis", axis);
}

inline void gather_nd(Draw& d, ElemType t, Case& c) {
  const Dims x = d.shape(1, 4, 3, 0.0);
  const auto r = static_cast<int64_t>(x.size());
  const int64_t batch = d.chance(0.3) ? d.pick(0, r - 1) : 0;
  const int64_t k = d.pick(1, r - batch);
  Dims ishape(x.begin(), x.begin() + batch);
  for (int64_t extra = d.pick(0, 2); extra > 0; --extra) ishape.push_back(d.pick(1, 3));
  ishape.push_back(k);
  Dims values;
  const auto count = static_cast<int64_t>(dims_element_count(ishape)) / k;
  for (int64_t p = 0; p < count; ++p)
    for (int64_t j = 0; j < k; ++j) values.push_back(d.indices(1, x[static_cast<std::size_t>(batch + j)])[0]);
  c.in(d.values(t, x, true));
  c.in(Draw::ints(ishape, values));
  if (batch) c.attr_int("batch_dims", batch);
}

// ScatterElements / Scatter: unique positions along the axis unless a reduction combines them.
inline F scatter_elements(bool reductions) {
  return [=](Draw& d, ElemType t, Case& c) {
    const Dims x = d.shape(1, 3, 4, 0.0);
    const auto r = static_cast<int64_t>(x.size());
    const int64_t axis = d.axis(r);
    const auto ax = static_cast<std::size_t>(axis < 0 ? axis + r : axis);
    const char* reduction = reductions ? d.one_of<const char*>({"none", "add", "mul", "max", "min"}) : "none";
    const bool unique = std::string(reduction) == "none";
    Dims ishape = x;
    for (std::size_t k = 0; k < ishape.size(); ++k) ishape[k] = d.pick(1, x[k]);
    const Dims perm = d.permutation(x[ax]);
    const Dims strides = eval::strides_of(ishape);
    Dims idx(dims_element_count(ishape));
    for (std::size_t p = 0; p < idx.size(); ++p) {
      const int64_t along = (static_cast<int64_t>(p) / strides[ax]) % ishape[ax];
      const int64_t v = unique ? perm[static_cast<std::size_t>(along)] : d.pick(0, x[ax] - 1);
      idx[p] = d.chance(0.3) ? v - x[ax] : v;
    }
    c.in(d.values(t, x, unique));
    c.in(Draw::ints(ishape, idx, d.chance(0.3)));
    c.in(d.values(t, ishape, unique));
    c.attr_int("axis", axis);
    if (reductions) c.attr_string("reduction", reduction);
    if (!reductions) c.opset = 10;
  };
}

inline void scatter_nd(Draw& d, ElemType t, Case& c) {
  const Dims x = d.shape(1, 3, 4, 0.0);
  const auto r = static_cast<int64_t>(x.size());
  const int64_t k = d.pick(1, r);
  const int64_t cells = std::accumulate(x.begin(), x.begin() + k, int64_t{1}, std::multiplies<>());
  const int64_t n = d.pick(1, cells);
  const char* reduction = d.one_of<const char*>({"none", "none", "add", "mul", "max", "min"});
  const Dims perm = d.permutation(cells);
  Dims idx;
  for (int64_t p = 0; p < n; ++p) {
    int64_t flat =
        std::string(reduction) == "none" ? perm[static_cast<std::size_t>(p)] : d.pick(0, cells - 1);
    Dims tuple(static_cast<std::size_t>(k));
    for (int64_t j = k - 1; j >= 0; --j) {
      const int64_t dim = x[static_cast<std::size_t>(j)];
      tuple[static_cast<std::size_t>(j)] = flat % dim - (d.chance(0.3) ? dim : 0);
      flat /= dim;
    }
    idx.insert(idx.end(), tuple.begin(), tuple.end());
  }
  Dims ushape{n};
  ushape.insert(ushape.end(), x.begin() + k, x.end());
  c.in(d.values(t, x, true));
  c.in(Draw::ints({n, k}, idx));
  c.in(d.values(t, ushape, true));
  c.attr_string("reduction", reduction);
}

inline void concat(Draw& d, ElemType t, Case& c) {
  const Dims x = d.shape(1, 4);
  const auto r = static_cast<int64_t>(x.size());
  const int64_t axis = d.axis(r);
  const auto ax = static_cast<std::size_t>(axis < 0 ? axis + r : axis);
  for (int64_t n = d.pick(1, 3); n > 0; --n) {
    Dims s = x;
    s[ax] = d.pick(0, 3);
    c.in(d.values(t, s, true));
  }
  c.attr_int("axis", axis);
}

inline void split(Draw& d, ElemType t, Case& c) {
  c.opset = d.one_of<int64_t>({13, 18});
  const Dims x = d.shape(1, 3, 6);
  const auto r = static_cast<int64_t>(x.size());
  const int64_t axis = d.axis(r);
  const int64_t n = x[static_cast<std::size_t>(axis < 0 ? axis + r : axis)];
  c.in(d.values(t, x, true));
  c.attr_int("axis", axis);
  if (d.chance(0.5)) {  // explicit sizes, zeros allowed
    Dims sizes;
    int64_t left = n;
    while (left > 0 && sizes.size() < 3) {
      sizes.push_back(d.pick(0, left));
      left -= sizes.back();
    }
    sizes.push_back(left);
    c.in(Draw::ints1(sizes));
    c.outputs = sizes.size();
  } else if (c.opset >= 18) {
    c.outputs = static_cast<std::size_t>(d.pick(1, std::max<int64_t>(n, 1)));
    c.attr_int("num_outputs", static_cast<int64_t>(c.outputs));
  } else {
    Dims divisors;
    for (int64_t k = 1; k <= std::max<int64_t>(n, 1); ++k)
      if (n % k == 0) divisors.push_back(k);
    c.outputs = static_cast<std::size_t>(
        divisors[static_cast<std::size_t>(d.pick(0, static_cast<int64_t>(divisors.size()) - 1))]);
  }
}

inline void squeeze(Draw& d, ElemType t, Case& c) {
  c.opset = d.one_of<int64_t>({11, 13});
  Dims x = d.shape(0, 4, 3);
  for (int64_t& v : x)
    if (d.chance(0.4)) v = 1;
  const auto r = static_cast<int64_t>(x.size());
  c.in(d.values(t, x, true));
  Dims axes;
  for (int64_t a = 0; a < r; ++a)
    if (x[static_cast<std::size_t>(a)] == 1 && d.chance(0.6)) axes.push_back(d.chance(0.5) ? a - r : a);
  if (axes.empty() && d.chance(0.5)) return;  // squeeze every 1
  if (c.opset >= 13)
    c.in(Draw::ints1(axes));
  else
    c.attr_ints("axes", axes);
}

inline void unsqueeze(Draw& d, ElemType t, Case& c) {
  c.opset = d.one_of<int64_t>({11, 13});
  const Dims x = d.shape(0, 3);
  const int64_t k = d.pick(1, 2);
  const int64_t out_rank = static_cast<int64_t>(x.size()) + k;
  Dims axes;
  for (int64_t a : d.permutation(out_rank)) {
    if (static_cast<int64_t>(axes.size()) == k) break;
    axes.push_back(d.chance(0.5) ? a - out_rank : a);
  }
  c.in(d.values(t, x, true));
  if (c.opset >= 13)
    c.in(Draw::ints1(axes));
  else
    c.attr_ints("axes", axes);
}

inline void expand(Draw& d, ElemType t, Case& c) {
  Dims x = d.shape(0, 3);
  for (int64_t& v : x)
    if (d.chance(0.4)) v = 1;
  Dims target = x;
  for (int64_t& v : target)
    if (v == 1 && d.chance(0.6))
      v = d.pick(0, 3);
    else if (d.chance(0.3))
      v = 1;  // a 1 in the shape keeps the input's dimension
  for (int64_t extra = d.pick(0, 2); extra > 0; --extra) target.insert(target.begin(), d.pick(1, 3));
  if (d.chance(0.2) && !target.empty()) target.erase(target.begin());
  c.in(d.values(t, x, true));
  c.in(Draw::ints1(target));
}

inline void pad(Draw& d, ElemType t, Case& c) {
  c.opset = d.one_of<int64_t>({13, 18, 19});
  const Dims x = d.shape(1, 3, 4, 0.0);
  const auto r = static_cast<int64_t>(x.size());
  const char* mode = d.one_of<const char*>({"constant", "constant", "reflect", "edge", "wrap"});
  const bool wrap_or_reflect = std::string(mode) == "reflect" || std::string(mode) == "wrap";
  Dims axes;
  const bool with_axes = c.opset >= 18 && d.chance(0.5);
  if (with_axes) {
    for (int64_t a : d.permutation(r))
      if (axes.empty() || d.chance(0.5)) axes.push_back(d.chance(0.5) ? a - r : a);
  }
  const std::size_t n = with_axes ? axes.size() : static_cast<std::size_t>(r);
  Dims pads(2 * n);
  for (std::size_t k = 0; k < 2 * n; ++k) {
    const int64_t axis = with_axes ? (axes[k % n] + r) % r : static_cast<int64_t>(k % n);
    const int64_t dim = x[static_cast<std::size_t>(axis)];
    pads[k] = wrap_or_reflect ? d.pick(0, dim - 1) : d.pick(-1, 3);
  }
  c.in(d.values(t, x, true));
  c.in(Draw::ints1(pads));
  if (std::string(mode) == "constant" && d.chance(0.6))
    c.in(d.values(t, {}, true));
  else if (with_axes)
    c.none();
  if (with_axes) c.in(Draw::ints1(axes));
  c.attr_string("mode", mode);
}

inline void topk(Draw& d, ElemType t, Case& c) {
  const Dims x = d.shape(1, 3, 5, 0.03);
  const auto r = static_cast<int64_t>(x.size());
  const int64_t axis = d.axis(r);
  const int64_t n = x[static_cast<std::size_t>(axis < 0 ? axis + r : axis)];
  c.in(d.values(t, x, true, false));
  c.in(Draw::ints1({d.pick(0, n)}));
  c.attr_int("axis", axis);
  if (d.chance(0.5)) c.attr_int("largest", d.pick(0, 1));
  c.attr_int("sorted", 1);
  c.outputs = 2;
}

inline void one_hot(Draw& d, ElemType t, Case& c) {
  const Dims ishape = d.shape(0, 3);
  const int64_t depth = d.pick(1, 5);
  const auto r = static_cast<int64_t>(ishape.size());
  Dims idx(dims_element_count(ishape));
  for (int64_t& v : idx) v = d.pick(-depth - 1, depth);  // one past either end: all "off"
  c.in(Draw::ints(ishape, idx, d.chance(0.3)));
  c.in(Draw::ints({}, {depth}));
  c.in(d.values(t, {2}, true));
  if (d.chance(0.7)) c.attr_int("axis", d.pick(-r - 1, r));
}

inline void cumsum(Draw& d, ElemType t, Case& c) {
  const Dims x = d.shape(1, 3);
  c.in(d.values(t, x, false));
  const bool narrow = d.chance(0.3);
  c.in(Draw::ints({}, {d.axis(static_cast<int64_t>(x.size()))}, narrow));
  if (d.chance(0.5)) c.attr_int("exclusive", 1);
  if (d.chance(0.5)) c.attr_int("reverse", 1);
}

// Cast to every type: values a float casts to any integer exactly (ONNX leaves other values undefined).
inline F cast(bool like) {
  return [=](Draw& d, ElemType t, Case& c) {
    const std::vector<ElemType> all = types_onnx_runtime_takes();
    const ElemType to = all[static_cast<std::size_t>(d.pick(0, static_cast<int64_t>(all.size()) - 1))];
    const bool to_int = is_integer(to) || to == ElemType::Bool;
    Tensor x = d.values(t, d.shape(0, 3), !is_float(t) && !to_int, !to_int);
    if (is_float(t) && is_integer(to)) {  // whole numbers in the target's range
      Tensor v = eval::cast_tensor(x, ElemType::Double);
      for (double& e : v.mutable_data<double>()) e = std::trunc(e) * (is_signed(to) ? 1 : (e < 0 ? -1 : 1));
      x = eval::cast_tensor(v, t);
      if (to == ElemType::Int8 || to == ElemType::UInt8) {
        Tensor small = eval::cast_tensor(x, ElemType::Double);
        for (double& e : small.mutable_data<double>()) e = std::fmod(e, 100.0);
        x = eval::cast_tensor(small, t);
      }
    }
    c.in(x);
    if (like)
      c.in(d.values(to, {d.pick(0, 2)}, false));
    else
      c.attr_int("to", static_cast<int64_t>(to));
  };
}

inline F quantize(bool dequantize) {
  return [=](Draw& d, ElemType t, Case& c) {
    c.opset = d.one_of<int64_t>({13, 19, 21});
    const Dims x = d.shape(0, 3);
    const bool per_axis = !x.empty() && d.chance(0.4);
    const int64_t axis = per_axis ? d.axis(static_cast<int64_t>(x.size())) : 1;
    const Dims pshape =
        per_axis ? Dims{x[static_cast<std::size_t>(axis < 0 ? axis + static_cast<int64_t>(x.size()) : axis)]}
                 : Dims{};
    const ElemType q = dequantize ? t : d.one_of<ElemType>({ElemType::UInt8, ElemType::Int8});
    if (dequantize) {
      c.in(d.values(t, x, true));
    } else {  // multiples of a quarter with scale 0.5: half-way cases, rounded to even
      Tensor v = d.values(ElemType::Double, x, false, false);
      for (double& e : v.mutable_data<double>()) e = std::round(e * 40) / 4;
      c.in(eval::cast_tensor(v, t));
    }
    Tensor scale = d.positive(ElemType::Float, pshape);
    if (!dequantize && d.chance(0.5)) scale = eval::filled(ElemType::Float, pshape, 0.5);
    c.in(scale);
    if (d.chance(0.7) && q != ElemType::Int32) c.in(d.values(q, pshape, false));
    if (per_axis) c.attr_int("axis", axis);
  };
}

inline void layer_norm(Draw& d, ElemType t, Case& c) {
  const Dims x = d.shape(1, 4, 4, 0.03);
  const int64_t axis = d.axis(static_cast<int64_t>(x.size()));
  c.in(d.values(t, x, false, false));
  c.in(d.values(t, trailing(x, axis), false, false));
  if (d.chance(0.5)) c.in(d.values(t, trailing(x, axis), false, false));
  c.attr_int("axis", axis);
  if (d.chance(0.5)) c.attr_float("epsilon", 1e-3f);
  c.outputs = static_cast<std::size_t>(d.pick(1, 3));
}

inline void simplified_layer_norm(Draw& d, ElemType t, Case& c) {
  const Dims x = d.shape(1, 4, 4, 0.0);
  const int64_t axis = d.chance(0.6) ? -1 : d.axis(static_cast<int64_t>(x.size()));
  c.in(d.values(t, x, false, false));
  c.in(d.values(t, trailing(x, axis), false, false));
  c.attr_int("axis", axis);
  if (d.chance(0.5)) c.attr_float("epsilon", 1e-3f);
}

inline void skip_layer_norm(Draw& d, ElemType t, Case& c, bool simplified) {
  const int64_t b = d.pick(1, 2), s = d.pick(1, 3), h = d.pick(1, 5);
  const bool rank2 = d.chance(0.2);
  const Dims x = rank2 ? Dims{s, h} : Dims{b, s, h};
  c.in(d.values(t, x, false, false));
  c.in(d.values(t, d.chance(0.8) || rank2 ? x : Dims{1, s, h}, false, false));
  c.in(d.values(t, {h}, false, false));
  const bool beta = !simplified && d.chance(0.6), bias = d.chance(0.5);
  if (!simplified) {
    if (beta)
      c.in(d.values(t, {h}, false, false));
    else if (bias)
      c.none();
  }
  if (bias) c.in(d.values(t, {h}, false, false));
  if (d.chance(0.5)) c.attr_float("epsilon", 1e-3f);
  c.outputs = static_cast<std::size_t>(d.chance(0.7) ? 1 : 4);
}

inline void rotary(Draw& d, ElemType t, Case& c, bool contrib) {
  const int64_t b = d.pick(1, 2), s = d.pick(1, 3), heads = d.pick(1, 2), dim = 2 * d.pick(1, 3);
  const int64_t max_pos = s + d.pick(0, 3);
  const bool interleaved = d.chance(0.5);
  const bool packed = d.chance(0.5);  // [B, S, heads * dim] rather than [B, heads, S, dim]
  c.in(d.values(t, packed ? Dims{b, s, heads * dim} : Dims{b, heads, s, dim}, false, false));
  Dims pos(static_cast<std::size_t>(b * s));
  for (int64_t& p : pos) p = d.pick(0, max_pos - 1);
  if (contrib) {
    c.in(Draw::ints({b, s}, pos));
    c.in(d.values(t, {max_pos, dim / 2}, false, false));
    c.in(d.values(t, {max_pos, dim / 2}, false, false));
  } else {
    c.opset = 23;
    c.in(d.values(t, {max_pos, dim / 2}, false, false));
    c.in(d.values(t, {max_pos, dim / 2}, false, false));
    c.in(Draw::ints({b, s}, pos));  // the onnx op takes its caches first, the positions last
  }
  if (interleaved) c.attr_int("interleaved", 1);
  if (packed) c.attr_int("num_heads", heads);
}

// com.microsoft MultiHeadAttention: 3-D query, 3-D or 4-D (batch, heads, total, head_size) key and value,
// an attention bias broadcast over batch or heads or none, the scale given or left to 1/sqrt(head_size),
// unidirectional or not.
inline void multi_head_attention(Draw& d, ElemType t, Case& c) {
  const int64_t b = d.pick(1, 2), s = d.pick(1, 3), total = d.pick(1, 4), heads = d.pick(1, 2), size = d.pick(1, 3);
  c.in(d.values(t, {b, s, heads * size}, false, false));
  const bool four_d = d.chance(0.5);
  for (int k = 0; k < 2; ++k)
    c.in(d.values(t, four_d ? Dims{b, heads, total, size} : Dims{b, total, heads * size}, false, false));
  if (d.chance(0.6)) {
    c.none();  // bias
    c.none();  // key_padding_mask
    c.in(d.values(t, {d.chance(0.5) ? b : 1, d.chance(0.5) ? heads : 1, s, total}, false, false));
  }
  c.attr_int("num_heads", heads);
  if (d.chance(0.5)) c.attr_float("scale", 0.25f);
  if (d.chance(0.3)) c.attr_int("unidirectional", 1);
}

// com.microsoft GroupQueryAttention as the onnxruntime set writes it: 3-D query, key and value of whole
// sequences (no past), key and value heads shared by groups of query heads, head sizes of 8 or 16 (ONNX
// Runtime takes multiples of 8), seqlens_k the sequence - 1 and total_sequence_length the sequence, the
// scale given or left to 1/sqrt(head_size); the present key and value are outputs too (required).
inline void group_query_attention(Draw& d, ElemType t, Case& c) {
  const int64_t b = d.pick(1, 2), s = d.pick(1, 4), kv_heads = d.pick(1, 2), heads = kv_heads * d.pick(1, 2);
  const int64_t size = 8 * d.pick(1, 2);
  c.in(d.values(t, {b, s, heads * size}, false, false));
  c.in(d.values(t, {b, s, kv_heads * size}, false, false));
  c.in(d.values(t, {b, s, kv_heads * size}, false, false));
  c.none();  // past_key
  c.none();  // past_value
  c.in(Draw::ints({b}, Dims(static_cast<std::size_t>(b), s - 1), true));
  c.in(eval::cast_tensor(Tensor::scalar<int64_t>(s), ElemType::Int32));
  c.attr_int("num_heads", heads);
  c.attr_int("kv_num_heads", kv_heads);
  if (d.chance(0.5)) c.attr_float("scale", 0.25f);
  c.outputs = 3;
}

// ONNX Attention (opset 23): Q, K, V all 4-D or all 3-D (q_num_heads, kv_num_heads), K and V heads
// shared by groups of query heads, an additive or boolean mask (which keeps key 0 of every row) or none,
// is_causal, past_key and past_value with the present outputs, the scale given or left to
// 1/sqrt(head_size).
inline void attention(Draw& d, ElemType t, Case& c) {
  c.opset = 23;
  const int64_t b = d.pick(1, 2), s = d.pick(1, 3), length = d.pick(1, 4), kv_heads = d.pick(1, 2);
  const int64_t q_heads = kv_heads * d.pick(1, 2), size = d.pick(1, 3), v_size = d.pick(1, 3);
  const bool three_d = d.chance(0.5);
  const auto layout = [&](int64_t heads, int64_t n, int64_t h) {
    return three_d ? Dims{b, n, heads * h} : Dims{b, heads, n, h};
  };
  c.in(d.values(t, layout(q_heads, s, size), false, false));
  c.in(d.values(t, layout(kv_heads, length, size), false, false));
  c.in(d.values(t, layout(kv_heads, length, v_size), false, false));
  const int64_t past = d.chance(0.4) ? d.pick(1, 2) : 0, total = length + past;
  const int64_t mask = d.pick(0, 2);  // none, additive, boolean
  const int64_t mask_batch = d.chance(0.5) ? b : 1, mask_heads = d.chance(0.5) ? q_heads : 1;
  const Dims mask_dims{mask_batch, mask_heads, s, total};
  if (mask == 1) {
    c.in(d.values(t, mask_dims, false, false));
  } else if (mask == 2) {
    std::vector<bool> keep;
    for (int64_t k = 0; k < dims_element_count(mask_dims); ++k)
      keep.push_back(k % total == 0 || d.chance(0.6));
    c.in(Tensor::from<bool>(mask_dims, keep));
  } else if (past > 0) {
    c.none();
  }
  if (past > 0) {
    c.in(d.values(t, {b, kv_heads, past, size}, false, false));
    c.in(d.values(t, {b, kv_heads, past, v_size}, false, false));
    c.outputs = 3;
  }
  if (three_d) {
    c.attr_int("q_num_heads", q_heads);
    c.attr_int("kv_num_heads", kv_heads);
  }
  if (d.chance(0.3)) c.attr_int("is_causal", 1);
  if (d.chance(0.5)) c.attr_float("scale", 0.25f);
}

}  // namespace ops_detail

// Every op the evaluator registers, with its case generator. The element types come from ONNX's
// schema where the registry knows the op (ONNX 1.12: opsets up to 17) and are written out otherwise.
inline std::vector<OpSpec> evaluator_op_specs() {
  using namespace ops_detail;
  std::vector<OpSpec> specs;
  auto add = [&](std::string op, std::string op_class, Match match, F make,
                 std::vector<ElemType> fallback = kFloats, std::string domain = "", int64_t per_type = 4,
                 std::size_t typed_input = 0) {
    std::vector<ElemType> types = schema_types(op, domain, 17, typed_input).value_or(fallback);
    specs.push_back({std::move(op), std::move(domain), std::move(op_class), match, per_type, std::move(types),
                     std::move(make)});
  };
  const std::string ms = "com.microsoft";
  auto alpha = [](const char* name, std::vector<double> v) {
    return [=](Draw& d, Case& c) {
      if (d.chance(0.7))
        c.attr_float(name, static_cast<float>(
                               v[static_cast<std::size_t>(d.pick(0, static_cast<int64_t>(v.size()) - 1))]));
    };
  };
  // Exact elementwise ops (no rounding of their own).
  for (const char* op : {"Sign", "Floor", "Ceil", "Round", "Relu", "IsNaN", "Identity", "Not"})
    add(op, "unary-exact", Match::Exact, unary(true));
  for (const char* op : {"Abs", "Neg", "Reciprocal", "Sqrt"})
    add(op, "unary-exact", Match::Exact, unary(false));
  add("IsInf", "unary-exact", Match::Exact, unary(false, [](Draw& d, Case& c) {
        if (d.chance(0.5)) c.attr_int("detect_negative", d.pick(0, 1));
        if (d.chance(0.5)) c.attr_int("detect_positive", d.pick(0, 1));
      }));
  // Transcendental and activation functions.
  for (const char* op :
       {"Exp",   "Log",   "Sin",   "Cos",  "Tan", "Asin",    "Acos",     "Atan",     "Sinh", "Cosh",
        "Asinh", "Acosh", "Atanh", "Tanh", "Erf", "Sigmoid", "Softplus", "Softsign", "Mish", "HardSwish"})
    add(op, "unary-math", Match::Close, unary(false));
  add("LeakyRelu", "unary-math", Match::Close, unary(false, alpha("alpha", {0.01, 0.2, -0.5})));
  add("Elu", "unary-math", Match::Close, unary(false, alpha("alpha", {0.5, 2.0})));
  add("Celu", "unary-math", Match::Close, unary(false, alpha("alpha", {0.5, 2.0})));
  add("Selu", "unary-math", Match::Close, unary(false, [](Draw& d, Case& c) {
        if (d.chance(0.5)) c.attr_float("alpha", 1.5f);
        if (d.chance(0.5)) c.attr_float("gamma", 0.75f);
      }));
  add("ThresholdedRelu", "unary-math", Match::Close, unary(false, alpha("alpha", {0.0, 0.5, 2.0})));
  add("HardSigmoid", "unary-math", Match::Close, unary(false, [](Draw& d, Case& c) {
        if (d.chance(0.5)) c.attr_float("alpha", 0.5f);
        if (d.chance(0.5)) c.attr_float("beta", 0.25f);
      }));
  add("Shrink", "unary-math", Match::Close, unary(false, [](Draw& d, Case& c) {
        if (d.chance(0.5)) c.attr_float("lambd", 1.5f);
        if (d.chance(0.5)) c.attr_float("bias", 0.25f);
      }));
  add("Gelu", "unary-math", Match::Close, [](Draw& d, ElemType t, Case& c) {
    c.opset = 20;
    unary(false)(d, t, c);
    if (d.chance(0.6)) c.attr_string("approximate", d.one_of<const char*>({"none", "tanh"}));
  });
  add("Gelu", "contrib", Match::Close, unary(false), kFloats, ms);
  add("QuickGelu", "contrib", Match::Close, unary(false, alpha("alpha", {1.702, 1.0})), kFloats, ms);
  add(
      "FastGelu", "contrib", Match::Close,
      [](Draw& d, ElemType t, Case& c) {
        const Dims x = d.shape(1, 3);
        c.in(d.values(t, x, false));
        if (d.chance(0.5)) c.in(d.values(t, {x.back()}, false));
      },
      kFloats, ms);
  add(
      "BiasGelu", "contrib", Match::Close,
      [](Draw& d, ElemType t, Case& c) {
        const Dims x = d.shape(1, 3, 4, 0.0);
        c.in(d.values(t, x, false));
        c.in(d.values(t, {x.back()}, false));
      },
      kFloats, ms);
  add("Dropout", "unary-exact", Match::Exact, [](Draw& d, ElemType t, Case& c) {
    c.in(d.values(t, d.shape(0, 4), false));
    if (d.chance(0.4)) c.in(Tensor::scalar<float>(0.25f));
    c.outputs = static_cast<std::size_t>(d.pick(1, 2));
  });
  // Binary and variadic.
  for (const char* op : {"Add", "Sub", "Mul"}) add(op, "binary", Match::Exact, binary(false));
  add("Div", "binary", Match::Exact, divisor_safe({}));
  add("Mod", "binary", Match::Exact, divisor_safe([](Draw& d, ElemType t, Case& c) {
        if (is_float(t) || d.chance(0.3)) c.attr_int("fmod", 1);
      }));
  add("BitShift", "binary", Match::Exact, [](Draw& d, ElemType t, Case& c) {
    broadcast_pair(d, t, c, false);
    Tensor amounts = eval::cast_tensor(*c.inputs[1], ElemType::Int64);
    for (int64_t& v : amounts.mutable_data<int64_t>()) v = v % (8 * static_cast<int64_t>(elem_size(t)));
    c.inputs[1] = eval::cast_tensor(amounts, t);
    c.attr_string("direction", d.one_of<const char*>({"LEFT", "RIGHT"}));
  });
  add("Pow", "binary", Match::Close, [](Draw& d, ElemType t, Case& c) {
    broadcast_pair(d, t, c, false);
    const std::vector<ElemType> exps = schema_types("Pow", "", 17, 1).value_or(kFloat);
    const ElemType e = exps[static_cast<std::size_t>(d.pick(0, static_cast<int64_t>(exps.size()) - 1))];
    Tensor y = eval::cast_tensor(*c.inputs[1], ElemType::Double);
    for (double& v : y.mutable_data<double>())
      v = std::isfinite(v)
              ? std::fmod(std::trunc(v), 4.0) + (is_float(t) && is_float(e) && d.chance(0.3) ? 0.5 : 0.0)
              : v;
    if (is_integer(t))  // no overflow, no negative power of an integer
      for (double& v : y.mutable_data<double>()) v = std::abs(v);
    c.inputs[1] = eval::cast_tensor(y, e);
  });
  for (const char* op : {"And", "Or", "Xor"}) add(op, "binary", Match::Exact, binary(false));
  for (const char* op : {"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"})
    add(op, "binary", Match::Exact, binary(true));
  add("PRelu", "binary", Match::Exact, [](Draw& d, ElemType t, Case& c) {
    const Dims x = d.shape(0, 4);
    c.in(d.values(t, x, false));
    c.in(d.values(t, d.partner(x), false));
  });
  for (const char* op : {"Sum", "Mean"}) add(op, "variadic", Match::Close, variadic(false));
  for (const char* op : {"Max", "Min"}) add(op, "variadic", Match::Exact, variadic(true));
  add(
      "Where", "variadic", Match::Exact,
      [](Draw& d, ElemType t, Case& c) {
        const Dims a = d.shape(0, 4);
        c.in(d.values(ElemType::Bool, d.partner(a)));
        c.in(d.values(t, d.chance(0.5) ? a : d.partner(a), true));
        c.in(d.values(t, d.partner(a), true));
      },
      kFloats, "", 4, 1);
  add("Clip", "variadic", Match::Exact, [](Draw& d, ElemType t, Case& c) {
    c.in(d.values(t, d.shape(0, 4), true));
    const int64_t which = d.pick(0, 3);
    if (which & 1)
      c.in(d.values(t, {}, true, false));
    else if (which & 2)
      c.none();
    if (which & 2) c.in(d.values(t, {}, true, false));
  });
  // Reductions.
  add("ReduceSum", "reduce", Match::Close, reduce(false, true));
  for (const char* op :
       {"ReduceMean", "ReduceProd", "ReduceLogSumExp", "ReduceSumSquare", "ReduceL1", "ReduceL2"})
    add(op, "reduce", Match::Close, reduce(false, false));
  add("ReduceLogSum", "reduce", Match::Close, [](Draw& d, ElemType t, Case& c) {
    reduce(false, false)(d, t, c);
    if (!is_integer(t)) return;
    Tensor x(ElemType::Int64, c.inputs[0]->dims());  // a positive sum: an integer NaN is undefined
    for (int64_t& v : x.mutable_data<int64_t>()) v = d.pick(1, 6);
    c.inputs[0] = eval::cast_tensor(x, t);
  });
  for (const char* op : {"ReduceMax", "ReduceMin"}) add(op, "reduce", Match::Exact, reduce(true, false));
  for (const char* op : {"ArgMax", "ArgMin"}) add(op, "reduce", Match::Exact, arg_reduce());
  add("CumSum", "reduce", Match::Close, cumsum);
  // Softmax family and normalizations.
  for (const char* op : {"Softmax", "LogSoftmax"}) add(op, "nn", Match::Close, softmax_like());
  add("Hardmax", "nn", Match::Exact, softmax_like());
  add("NegativeLogLikelihoodLoss", "nn", Match::Close, loss(false));
  add("SoftmaxCrossEntropyLoss", "nn", Match::Close, loss(true));
  add("LayerNormalization", "nn", Match::Close, layer_norm);
  add("SimplifiedLayerNormalization", "nn", Match::Close, simplified_layer_norm, kFloats);
  add("SimplifiedLayerNormalization", "contrib", Match::Close, simplified_layer_norm, kFloats, ms);
  add("RMSNormalization", "nn", Match::Close, [](Draw& d, ElemType t, Case& c) {
    simplified_layer_norm(d, t, c);
    c.opset = 23;
  });
  add("BatchNormalization", "nn", Match::Close, [](Draw& d, ElemType t, Case& c) {
    const int64_t channels = d.pick(1, 3), spatial = d.pick(0, 2);
    const Dims x = nc_spatial(d, spatial, channels);
    const Dims ch{x[1]};
    c.opset = 15;
    c.in(d.values(t, x, false, false));
    c.in(d.values(t, ch, false, false));
    c.in(d.values(t, ch, false, false));
    c.in(d.values(t, ch, false, false));
    c.in(d.positive(t, ch));
    if (d.chance(0.5)) c.attr_float("epsilon", 1e-2f);
  });
  add("InstanceNormalization", "nn", Match::Close, [](Draw& d, ElemType t, Case& c) {
    const int64_t channels = d.pick(1, 3), spatial = d.pick(1, 2);
    const Dims x = nc_spatial(d, spatial, channels);
    c.in(d.values(t, x, false, false));
    c.in(d.values(t, {x[1]}, false, false));
    c.in(d.values(t, {x[1]}, false, false));
  });
  add("LRN", "nn", Match::Close, [](Draw& d, ElemType t, Case& c) {
    const int64_t channels = d.pick(1, 5), spatial = d.pick(1, 2);
    c.in(d.values(t, nc_spatial(d, spatial, channels), false, false));
    c.attr_int("size", d.one_of<int64_t>({1, 3, 5}));
    if (d.chance(0.5)) c.attr_float("alpha", 0.01f);
    if (d.chance(0.5)) c.attr_float("beta", 0.5f);
    if (d.chance(0.5)) c.attr_float("bias", 2.0f);
  });
  add("Conv", "conv", Match::Close, conv(false));
  add("FusedConv", "contrib", Match::Close, conv(true), kFloat, ms);
  add("MaxPool", "conv", Match::Exact, pool(true));
  add("AveragePool", "conv", Match::Close, pool(false));
  add("GlobalMaxPool", "conv", Match::Exact, global_pool());
  add("GlobalAveragePool", "conv", Match::Close, global_pool());
  // Matrix products.
  add("MatMul", "matmul", Match::Close, [](Draw& d, ElemType t, Case& c) { matmul_operands(d, t, c, 1); });
  add("Gemm", "matmul", Match::Close, [](Draw& d, ElemType t, Case& c) { gemm_like(d, t, c, false); });
  add(
      "FusedGemm", "contrib", Match::Close, [](Draw& d, ElemType t, Case& c) { gemm_like(d, t, c, true); },
      kFloat, ms);
  add(
      "FusedMatMul", "contrib", Match::Close,
      [](Draw& d, ElemType t, Case& c) {
        matmul_operands(d, t, c, 2);
        if (d.chance(0.5)) c.attr_float("alpha", 0.5f);
        // transposing swaps the last two dimensions of an operand: draw the operand so it fits
        if (d.chance(0.3)) {
          Tensor& a = *c.inputs[0];
          Dims ad = a.dims();
          std::swap(ad[ad.size() - 1], ad[ad.size() - 2]);
          a = d.values(t, ad, false, false);
          c.attr_int("transA", 1);
        }
      },
      kFloats, ms);
  // Shape and data-movement ops.
  add("Reshape", "shape", Match::Exact, reshape);
  add("Flatten", "shape", Match::Exact, [](Draw& d, ElemType t, Case& c) {
    const Dims x = d.shape(0, 4);
    const auto r = static_cast<int64_t>(x.size());
    c.in(d.values(t, x, true));
    c.attr_int("axis", d.pick(-r, r));
  });
  add("Transpose", "shape", Match::Exact, [](Draw& d, ElemType t, Case& c) {
    const Dims x = d.shape(0, 4);
    c.in(d.values(t, x, true));
    if (d.chance(0.8)) c.attr_ints("perm", d.permutation(static_cast<int64_t>(x.size())));
  });
  add("Concat", "shape", Match::Exact, concat);
  add("Split", "shape", Match::Exact, split);
  add("Slice", "shape", Match::Exact, slice);
  add("Gather", "gather", Match::Exact, gather);
  add("GatherElements", "gather", Match::Exact, gather_elements);
  add("GatherND", "gather", Match::Exact, gather_nd);
  add("ScatterElements", "gather", Match::Close, scatter_elements(true));
  add("Scatter", "gather", Match::Exact, scatter_elements(false));
  add("ScatterND", "gather", Match::Close, scatter_nd);
  add("Squeeze", "shape", Match::Exact, squeeze);
  add("Unsqueeze", "shape", Match::Exact, unsqueeze);
  add("Expand", "shape", Match::Exact, expand);
  add("Shape", "shape", Match::Exact, [](Draw& d, ElemType t, Case& c) {
    const Dims x = d.shape(0, 4);
    const auto r = static_cast<int64_t>(x.size());
    c.opset = 15;
    c.in(d.values(t, x));
    if (d.chance(0.5)) c.attr_int("start", d.pick(-r - 2, r + 2));
    if (d.chance(0.5)) c.attr_int("end", d.pick(-r - 2, r + 2));
  });
  add("Size", "shape", Match::Exact, [](Draw& d, ElemType t, Case& c) { c.in(d.values(t, d.shape(0, 4))); });
  add(
      "ConstantOfShape", "shape", Match::Exact,
      [](Draw& d, ElemType t, Case& c) {
        c.in(Draw::ints1(d.shape(0, 3)));
        if (d.chance(0.8)) c.attr(ir::Attribute::make_tensor(Symbol("value"), d.values(t, {1}, true)));
      },
      types_onnx_runtime_takes(), "", 2);
  add("Range", "shape", Match::Close, [](Draw& d, ElemType t, Case& c) {
    const double start = static_cast<double>(d.pick(-5, 5)), delta = d.one_of<double>({1, 2, -1, -3, 0.5});
    const double limit = start + delta * static_cast<double>(d.pick(-1, 6)) + (is_float(t) ? 0.25 : 0.0);
    const double step = is_integer(t) ? std::trunc(delta) == 0 ? 1 : std::trunc(delta) : delta;
    c.in(eval::cast_tensor(Tensor::scalar<double>(start), t));
    c.in(eval::cast_tensor(Tensor::scalar<double>(limit), t));
    c.in(eval::cast_tensor(Tensor::scalar<double>(step), t));
  });
  add("Tile", "shape", Match::Exact, [](Draw& d, ElemType t, Case& c) {
    const Dims x = d.shape(0, 3);
    c.in(d.values(t, x, true));
    Dims reps(x.size());
    for (int64_t& v : reps) v = d.pick(0, 3);
    c.in(Draw::ints1(reps));
  });
  add("Pad", "shape", Match::Exact, pad);
  add("Trilu", "shape", Match::Exact, [](Draw& d, ElemType t, Case& c) {
    const Dims x = d.shape(2, 4);
    c.in(d.values(t, x, true));
    if (d.chance(0.7)) c.in(Draw::ints({}, {d.pick(-5, 5)}));
    if (d.chance(0.5)) c.attr_int("upper", d.pick(0, 1));
  });
  add("EyeLike", "shape", Match::Exact, [](Draw& d, ElemType t, Case& c) {
    c.in(d.values(t, d.shape(2, 2, 5)));
    if (d.chance(0.6)) c.attr_int("k", d.pick(-6, 6));
    if (d.chance(0.4)) c.attr_int("dtype", d.one_of<int64_t>({1, 6, 7, 9, 11}));
  });
  add("Compress", "shape", Match::Exact, [](Draw& d, ElemType t, Case& c) {
    const Dims x = d.shape(1, 3);
    const auto r = static_cast<int64_t>(x.size());
    const bool with_axis = d.chance(0.7);
    const int64_t axis = d.axis(r);
    const int64_t n = with_axis ? x[static_cast<std::size_t>(axis < 0 ? axis + r : axis)]
                                : static_cast<int64_t>(dims_element_count(x));
    c.in(d.values(t, x, true));
    c.in(d.values(ElemType::Bool, {d.pick(0, n)}));
    if (with_axis) c.attr_int("axis", axis);
  });
  add("DepthToSpace", "shape", Match::Exact, [](Draw& d, ElemType t, Case& c) {
    const int64_t b = d.pick(1, 3);
    c.in(d.values(t, {d.pick(1, 2), b * b * d.pick(1, 2), d.pick(1, 3), d.pick(1, 3)}, true));
    c.attr_int("blocksize", b);
    if (d.chance(0.6)) c.attr_string("mode", d.one_of<const char*>({"DCR", "CRD"}));
  });
  add("SpaceToDepth", "shape", Match::Exact, [](Draw& d, ElemType t, Case& c) {
    const int64_t b = d.pick(1, 3);
    c.in(d.values(t, {d.pick(1, 2), d.pick(1, 3), b * d.pick(1, 2), b * d.pick(1, 2)}, true));
    c.attr_int("blocksize", b);
  });
  add("ReverseSequence", "shape", Match::Exact, [](Draw& d, ElemType t, Case& c) {
    Dims x = d.shape(2, 4, 4, 0.0);
    const bool batch_first = d.chance(0.5);
    const int64_t time = x[batch_first ? 1 : 0], batch = x[batch_first ? 0 : 1];
    c.in(d.values(t, x, true));
    Dims lens(static_cast<std::size_t>(batch));
    for (int64_t& v : lens) v = d.pick(1, time);
    c.in(Draw::ints1(lens));
    if (batch_first) {
      c.attr_int("batch_axis", 0);
      c.attr_int("time_axis", 1);
    }
  });
  add("TopK", "value", Match::Exact, topk);
  add("NonZero", "value", Match::Exact,
      [](Draw& d, ElemType t, Case& c) { c.in(d.values(t, d.shape(0, 3), true)); });
  add("OneHot", "value", Match::Exact, one_hot, kFloats, "", 4, 2);
  add("Cast", "cast", Match::Exact, cast(false), types_onnx_runtime_takes(), "", 12);
  add("CastLike", "cast", Match::Exact, cast(true), types_onnx_runtime_takes(), "", 12);
  add("QuantizeLinear", "cast", Match::Exact, quantize(false), kFloat);
  add("DequantizeLinear", "cast", Match::Close, quantize(true),
      {ElemType::UInt8, ElemType::Int8, ElemType::Int32});
  // com.microsoft contrib ops.
  add(
      "SkipLayerNormalization", "contrib", Match::Close,
      [](Draw& d, ElemType t, Case& c) { skip_layer_norm(d, t, c, false); }, kFloats, ms);
  add(
      "SkipSimplifiedLayerNormalization", "contrib", Match::Close,
      [](Draw& d, ElemType t, Case& c) { skip_layer_norm(d, t, c, true); }, kFloats, ms);
  add(
      "BiasSoftmax", "contrib", Match::Close,
      [](Draw& d, ElemType t, Case& c) {
        const Dims x = d.shape(2, 4, 4, 0.0);
        c.in(d.values(t, x, false, false));
        Dims bias = x;
        bias[0] = 1;
        c.in(d.values(t, bias, false, false));
        c.attr_int("axis", -1);
      },
      kFloats, ms);
  for (const char* op :
       {"SoftmaxGrad", "SoftmaxGrad_13"})  // training ops: ONNX Runtime's inference build lacks them
    add(
        op, "contrib", Match::Close,
        [](Draw& d, ElemType t, Case& c) {
          const Dims x = d.shape(1, 3, 4, 0.0);
          c.in(d.values(t, x, false, false));
          c.in(d.values(t, x, false, false));
          c.attr_int("axis", d.axis(static_cast<int64_t>(x.size())));
        },
        kFloat, ms, 2);
  add(
      "RotaryEmbedding", "contrib", Match::Close, [](Draw& d, ElemType t, Case& c) { rotary(d, t, c, true); },
      kFloats, ms);
  add(
      "RotaryEmbedding", "nn", Match::Close, [](Draw& d, ElemType t, Case& c) { rotary(d, t, c, false); },
      kFloats);
  add("MultiHeadAttention", "contrib", Match::Close, multi_head_attention, {ElemType::Float, ElemType::Float16}, ms);
  add("GroupQueryAttention", "contrib", Match::Close, group_query_attention, {ElemType::Float, ElemType::Float16},
      ms);
  add("Attention", "nn", Match::Close, attention, {ElemType::Float, ElemType::Float16});
  add(
      "Constant", "shape", Match::Exact,
      [](Draw& d, ElemType t, Case& c) {
        c.attr(ir::Attribute::make_tensor(Symbol("value"), d.values(t, d.shape(0, 3), true)));
      },
      types_onnx_runtime_takes(), "", 1);
  return specs;
}

}  // namespace xexp::testing::differential
