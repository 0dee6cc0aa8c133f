#pragma once
// Elementwise kernels: unary math and activations, binary arithmetic and comparisons with numpy
// broadcasting, logical ops, variadic Sum/Mean/Max/Min, Where, Clip.
#include <cmath>
#include <numbers>
#include <type_traits>

#include "xexp/eval/kernel.hpp"
#include "xexp/eval/tensor_util.hpp"

namespace xexp::eval::kernels {

// out = f(x) with the input's element type; `f` receives the context for attribute-driven activations.
template <bool FloatsOnly = true, class F>
Kernel unary(F f) {
  return [f](const KernelContext& c) -> std::vector<Tensor> {
    const Tensor& x = c.in(0);
    auto run = [&](auto tag) {
      using T = typename decltype(tag)::type;
      Tensor out(x.type(), x.dims());
      auto src = x.data<T>();
      auto dst = out.mutable_data<T>();
      auto g = f(c, tag);
      for (int64_t k = 0; k < x.size(); ++k) dst[k] = static_cast<T>(g(src[k]));
      return std::vector<Tensor>{out};
    };
    if constexpr (FloatsOnly) return visit_float_type(x.type(), run);
    else return visit_type(x.type(), run);
  };
}
// A unary function that needs no attribute: F(x) for every float type.
#define XEXP_UNARY_FN(expr) \
  unary([](const KernelContext&, auto) { return [](auto x) { return expr; }; })

// Binary op keeping the element type. `f` is a generic callable applied to two T.
template <class F>
Kernel binary_same_type(F f, bool allow_bool = false) {
  return [f, allow_bool](const KernelContext& c) -> std::vector<Tensor> {
    const Tensor& a = c.in(0);
    const Tensor& b = c.in(1);
    if (a.type() != b.type()) c.fail("inputs have different types " + std::string(elem_type_name(a.type())) + " and " + std::string(elem_type_name(b.type())));
    if (a.type() == ElemType::Bool && !allow_bool) c.fail("bool inputs are not supported");
    return visit_type(a.type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      auto g = f(c, tag);
      return std::vector<Tensor>{broadcast_binary<T, T, T>(a, b, [&](T x, T y) { return static_cast<T>(g(x, y)); })};
    });
  };
}

// Comparison: bool output.
template <class F>
Kernel compare(F f) {
  return [f](const KernelContext& c) -> std::vector<Tensor> {
    const Tensor& a = c.in(0);
    const Tensor& b = c.in(1);
    if (a.type() == ElemType::String && b.type() == ElemType::String) {  // Equal on strings
      const auto& sa = a.string_data();
      const auto& sb = b.string_data();
      std::vector<int64_t> dims = broadcast_dims({&a.dims(), &b.dims()});
      Tensor out(ElemType::Bool, dims);
      auto o = out.mutable_data<bool>();
      for_each_strided<2>(dims, {broadcast_strides(a.dims(), dims), broadcast_strides(b.dims(), dims)},
                          [&](int64_t k, const std::array<int64_t, 2>& off) { o[k] = f(sa[off[0]].compare(sb[off[1]]), 0); });
      return {out};
    }
    if (a.type() != b.type()) c.fail("inputs have different types");
    return visit_type(a.type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      return std::vector<Tensor>{broadcast_binary<bool, T, T>(a, b, [&](T x, T y) { return f(x, y); })};
    });
  };
}

template <class T>
T int_pow(T base, double e) {
  return saturate_cast<T>(std::pow(static_cast<double>(base), e));
}

inline std::vector<Tensor> pow_kernel(const KernelContext& c) {
  const Tensor& a = c.in(0);
  const Tensor b = cast_tensor(c.in(1), ElemType::Double);
  return visit_type(a.type(), [&](auto tag) -> std::vector<Tensor> {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      c.fail("bool is not supported");
    } else {
      return {broadcast_binary<T, T, double>(a, b, [](T x, double y) {
        if constexpr (std::is_floating_point_v<T>) {
          if (y == 2) return static_cast<T>(x * x);  // exact and fast for the common square
          return static_cast<T>(std::pow(x, static_cast<T>(y)));
        } else {
          return int_pow(x, y);
        }
      })};
    }
  });
}

// Sum, Mean, Max, Min over any number of broadcast inputs.
template <class F>
Kernel variadic(F f, bool mean = false) {
  return [f, mean](const KernelContext& c) -> std::vector<Tensor> {
    Tensor acc = c.in(0);
    for (std::size_t i = 1; i < c.input_count(); ++i) {
      const Tensor& b = c.in(i);
      acc = visit_type(acc.type(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        return broadcast_binary<T, T, T>(acc, b, [&](T x, T y) { return static_cast<T>(f(x, y)); });
      });
    }
    if (mean) {
      const auto n = static_cast<double>(c.input_count());
      acc = visit_type(acc.type(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        Tensor out(acc.type(), acc.dims());
        auto dst = out.mutable_data<T>();
        auto src = acc.data<T>();
        for (int64_t k = 0; k < acc.size(); ++k) dst[k] = static_cast<T>(src[k] / n);
        return out;
      });
    }
    if (c.input_count() == 1) acc = cast_tensor(acc, acc.type());
    return {acc};
  };
}

inline std::vector<Tensor> where_kernel(const KernelContext& c) {
  const Tensor& cond = c.in(0);
  const Tensor& x = c.in(1);
  const Tensor& y = c.in(2);
  const std::vector<int64_t> dims = broadcast_dims({&cond.dims(), &x.dims(), &y.dims()});
  std::array<std::vector<int64_t>, 3> strides{broadcast_strides(cond.dims(), dims), broadcast_strides(x.dims(), dims),
                                              broadcast_strides(y.dims(), dims)};
  auto flags = cond.data<bool>();
  if (x.type() == ElemType::String) {
    std::vector<std::string> out(dims_element_count(dims));
    const auto& sx = x.string_data();
    const auto& sy = y.string_data();
    for_each_strided<3>(dims, strides, [&](int64_t k, const std::array<int64_t, 3>& o) { out[k] = flags[o[0]] ? sx[o[1]] : sy[o[2]]; });
    return {Tensor::strings(dims, std::move(out))};
  }
  return visit_type(x.type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Tensor out(x.type(), dims);
    auto dst = out.mutable_data<T>();
    auto sx = x.data<T>();
    auto sy = y.data<T>();
    for_each_strided<3>(dims, strides, [&](int64_t k, const std::array<int64_t, 3>& o) { dst[k] = flags[o[0]] ? sx[o[1]] : sy[o[2]]; });
    return std::vector<Tensor>{out};
  });
}

// min(max(x, lo), hi), as ONNX defines it: crossed bounds (lo > hi) give hi. An absent bound is the
// input type's lowest or highest value, float16's and bfloat16's included (an -inf float16 becomes
// -65504): those two are clipped in float between their own limits, not float's.
inline std::vector<Tensor> clip_kernel(const KernelContext& c) {
  const ElemType type = c.in(0).type();
  auto widened = [&](std::size_t k) { return is_half(type) ? cast_tensor(c.in(k), ElemType::Float) : c.in(k); };
  const Tensor x = widened(0);
  Tensor out = visit_type(x.type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
    if constexpr (std::is_same_v<T, float>) {
      if (is_half(type)) {
        hi = type == ElemType::Float16 ? half_to_float(0x7bff) : bfloat16_to_float(0x7f7f);
        lo = -hi;
      }
    }
    if (c.opset < 11) {
      lo = static_cast<T>(c.attr_float("min", static_cast<float>(lo)));
      hi = static_cast<T>(c.attr_float("max", static_cast<float>(hi)));
    } else {
      if (c.has(1)) lo = widened(1).template data<T>()[0];
      if (c.has(2)) hi = widened(2).template data<T>()[0];
    }
    Tensor clipped(x.type(), x.dims());
    auto src = x.data<T>();
    auto dst = clipped.mutable_data<T>();
    for (int64_t k = 0; k < x.size(); ++k) {
      const T raised = src[k] < lo ? lo : src[k];
      dst[k] = raised > hi ? hi : raised;
    }
    return clipped;
  });
  return {is_half(type) ? cast_tensor(out, type) : out};
}

inline std::vector<Tensor> not_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  Tensor out(ElemType::Bool, x.dims());
  auto src = x.data<bool>();
  auto dst = out.mutable_data<bool>();
  for (int64_t k = 0; k < x.size(); ++k) dst[k] = !src[k];
  return {out};
}

inline std::vector<Tensor> prelu_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  return visit_type(x.type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    return std::vector<Tensor>{broadcast_binary<T, T, T>(x, c.in(1), [](T v, T s) { return v < T(0) ? static_cast<T>(v * s) : v; })};
  });
}

inline std::vector<Tensor> is_inf_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  const bool pos = c.attr_int("detect_positive", 1) != 0, neg = c.attr_int("detect_negative", 1) != 0;
  Tensor out(ElemType::Bool, x.dims());
  auto dst = out.mutable_data<bool>();
  visit_float_type(x.type(), [&](auto tag) {
    auto src = x.data<typename decltype(tag)::type>();
    for (int64_t k = 0; k < x.size(); ++k) dst[k] = std::isinf(src[k]) && ((src[k] > 0 && pos) || (src[k] < 0 && neg));
  });
  return {out};
}
inline std::vector<Tensor> is_nan_kernel(const KernelContext& c) {
  const Tensor& x = c.in(0);
  Tensor out(ElemType::Bool, x.dims());
  auto dst = out.mutable_data<bool>();
  visit_float_type(x.type(), [&](auto tag) {
    auto src = x.data<typename decltype(tag)::type>();
    for (int64_t k = 0; k < x.size(); ++k) dst[k] = std::isnan(src[k]);
  });
  return {out};
}

// The sign of NaN is NaN, as numpy's sign (the reference implementation's) gives.
template <class T>
T sign_of(T x) {
  if constexpr (std::is_unsigned_v<T>) return x > T(0) ? T(1) : T(0);
  else return x > T(0) ? T(1) : (x < T(0) ? T(-1) : (x == T(0) ? T(0) : x));
}

inline double gelu_erf(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
inline double gelu_tanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x)));
}

inline void register_elementwise(KernelRegistry& r) {
  r.add("Abs", unary<false>([](const KernelContext&, auto tag) {
          return [](auto x) {
            using T = typename decltype(tag)::type;
            if constexpr (std::is_unsigned_v<T> || std::is_same_v<T, bool>) return x;
            else return x < T(0) ? wrapping_neg<T>(x) : x;  // Abs(INT64_MIN) wraps to itself
          };
        }));
  r.add("Neg", unary<false>([](const KernelContext&, auto tag) {
          return [](auto x) {
            using T = typename decltype(tag)::type;
            return wrapping_neg<T>(x);
          };
        }));
  r.add("Sign", unary<false>([](const KernelContext&, auto) { return [](auto x) { return sign_of(x); }; }));
  r.add("Exp", XEXP_UNARY_FN(std::exp(x)));
  r.add("Log", XEXP_UNARY_FN(std::log(x)));
  r.add("Sqrt", XEXP_UNARY_FN(std::sqrt(x)));
  r.add("Reciprocal", XEXP_UNARY_FN(1 / x));
  r.add("Floor", XEXP_UNARY_FN(std::floor(x)));
  r.add("Ceil", XEXP_UNARY_FN(std::ceil(x)));
  r.add("Round", XEXP_UNARY_FN(std::nearbyint(x)));
  r.add("Sin", XEXP_UNARY_FN(std::sin(x)));
  r.add("Cos", XEXP_UNARY_FN(std::cos(x)));
  r.add("Tan", XEXP_UNARY_FN(std::tan(x)));
  r.add("Asin", XEXP_UNARY_FN(std::asin(x)));
  r.add("Acos", XEXP_UNARY_FN(std::acos(x)));
  r.add("Atan", XEXP_UNARY_FN(std::atan(x)));
  r.add("Sinh", XEXP_UNARY_FN(std::sinh(x)));
  r.add("Cosh", XEXP_UNARY_FN(std::cosh(x)));
  r.add("Asinh", XEXP_UNARY_FN(std::asinh(x)));
  r.add("Acosh", XEXP_UNARY_FN(std::acosh(x)));
  r.add("Atanh", XEXP_UNARY_FN(std::atanh(x)));
  r.add("Tanh", XEXP_UNARY_FN(std::tanh(x)));
  r.add("Erf", XEXP_UNARY_FN(std::erf(x)));
  r.add("Sigmoid", XEXP_UNARY_FN(x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x))));
  r.add("Softplus", XEXP_UNARY_FN(std::log1p(std::exp(x))));
  r.add("Softsign", XEXP_UNARY_FN(x / (1 + std::abs(x))));
  r.add("Mish", XEXP_UNARY_FN(x * std::tanh(std::log1p(std::exp(x)))));
  r.add("HardSwish", XEXP_UNARY_FN(x * std::max(0.0, std::min(1.0, x / 6.0 + 0.5))));
  r.add("Relu", unary<false>([](const KernelContext&, auto tag) {
          return [](auto x) {
            using T = typename decltype(tag)::type;
            return nan_max(x, T(0));
          };
        }));
  r.add("LeakyRelu", unary([](const KernelContext& c, auto) {
          const double alpha = c.attr_float("alpha", 0.01f);
          return [alpha](auto x) { return x < 0 ? x * alpha : x; };
        }));
  r.add("Elu", unary([](const KernelContext& c, auto) {
          const double alpha = c.attr_float("alpha", 1.0f);
          return [alpha](auto x) { return x < 0 ? alpha * (std::exp(x) - 1) : x; };
        }));
  r.add("Celu", unary([](const KernelContext& c, auto) {
          const double alpha = c.attr_float("alpha", 1.0f);
          return [alpha](auto x) { return nan_max(0.0, double(x)) + nan_min(0.0, alpha * (std::exp(x / alpha) - 1)); };
        }));
  r.add("Selu", unary([](const KernelContext& c, auto) {
          const double alpha = c.attr_float("alpha", 1.67326319217681884765625f);
          const double gamma = c.attr_float("gamma", 1.05070102214813232421875f);
          return [alpha, gamma](auto x) { return x <= 0 ? gamma * (alpha * std::exp(x) - alpha) : gamma * x; };
        }));
  r.add("ThresholdedRelu", unary([](const KernelContext& c, auto) {
          const double alpha = c.attr_float("alpha", 1.0f);
          return [alpha](auto x) { return x > alpha ? double(x) : 0.0; };
        }));
  r.add("HardSigmoid", unary([](const KernelContext& c, auto) {
          const double alpha = c.attr_float("alpha", 0.2f), beta = c.attr_float("beta", 0.5f);
          return [alpha, beta](auto x) { return nan_max(0.0, nan_min(1.0, alpha * x + beta)); };
        }));
  r.add("Shrink", unary<false>([](const KernelContext& c, auto) {
          const double lambd = c.attr_float("lambd", 0.5f), bias = c.attr_float("bias", 0.0f);
          return [lambd, bias](auto x) { return x < -lambd ? x + bias : (x > lambd ? x - bias : 0.0); };
        }));
  // Gelu: ONNX opset 20 (approximate = none | tanh) and com.microsoft (erf).
  auto gelu = unary([](const KernelContext& c, auto) {
    const bool tanh = c.attr_string("approximate", "none") == "tanh";
    return [tanh](auto x) { return tanh ? gelu_tanh(x) : gelu_erf(x); };
  });
  r.add("Gelu", gelu);
  r.add("com.microsoft", "Gelu", gelu);

  // Integer overflow wraps around, as in ONNX Runtime (core/checked_int.hpp).
  r.add("Add", binary_same_type([](const KernelContext&, auto) { return [](auto x, auto y) { return wrapping_add(x, y); }; }));
  r.add("Sub", binary_same_type([](const KernelContext&, auto) { return [](auto x, auto y) { return wrapping_sub(x, y); }; }));
  r.add("Mul", binary_same_type([](const KernelContext&, auto) { return [](auto x, auto y) { return wrapping_mul(x, y); }; }));
  r.add("Div", binary_same_type([](const KernelContext& c, auto tag) {
          using T = typename decltype(tag)::type;
          return [&c](T x, T y) -> T {
            (void)c;  // used by the integer instantiations only
            if constexpr (std::is_integral_v<T>) {
              if (const char* why = division_error(x, y)) c.fail(why);
            }
            return int_divide(x, y);
          };
        }));
  r.add("Mod", binary_same_type([](const KernelContext& c, auto tag) {
          using T = typename decltype(tag)::type;
          const bool fmod = c.attr_int("fmod", 0) != 0;
          return [&c, fmod](T x, T y) -> T {
            (void)c;  // each branch uses only some of the captures
            (void)fmod;
            if constexpr (std::is_floating_point_v<T>) {
              T m = std::fmod(x, y);
              if (!fmod && m != 0 && ((m < 0) != (y < 0))) m += y;
              return m;
            } else {
              if (y == T(0)) c.fail("integer modulo by zero");
              T m = int_remainder(x, y);
              if constexpr (std::is_signed_v<T>)
                if (!fmod && m != 0 && ((m < 0) != (y < 0))) m = static_cast<T>(m + y);
              return m;
            }
          };
        }));
  r.add("BitShift", binary_same_type([](const KernelContext& c, auto tag) {
          using T = typename decltype(tag)::type;
          const bool left = c.attr_string("direction") == "LEFT";
          return [left](T x, T y) -> T {
            (void)left;  // unused by the non-integer instantiations
            if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) return left ? shift_left(x, y) : shift_right(x, y);
            else return x;
          };
        }));
  r.add("Pow", pow_kernel);
  r.add("And", binary_same_type([](const KernelContext&, auto) { return [](auto x, auto y) { return x && y; }; }, true));
  r.add("Or", binary_same_type([](const KernelContext&, auto) { return [](auto x, auto y) { return x || y; }; }, true));
  r.add("Xor", binary_same_type([](const KernelContext&, auto) { return [](auto x, auto y) { return bool(x) != bool(y); }; }, true));
  r.add("Not", not_kernel);
  r.add("Equal", compare([](auto x, auto y) { return x == y; }));
  r.add("Less", compare([](auto x, auto y) { return x < y; }));
  r.add("LessOrEqual", compare([](auto x, auto y) { return x <= y; }));
  r.add("Greater", compare([](auto x, auto y) { return x > y; }));
  r.add("GreaterOrEqual", compare([](auto x, auto y) { return x >= y; }));
  r.add("Sum", variadic([](auto x, auto y) { return wrapping_add(x, y); }));
  r.add("Mean", variadic([](auto x, auto y) { return wrapping_add(x, y); }, true));
  r.add("Max", variadic([](auto x, auto y) { return nan_max(x, y); }));
  r.add("Min", variadic([](auto x, auto y) { return nan_min(x, y); }));
  r.add("Where", where_kernel);
  r.add("Clip", clip_kernel, false);
  r.add("PRelu", prelu_kernel);
  r.add("IsInf", is_inf_kernel);
  r.add("IsNaN", is_nan_kernel);
}

#undef XEXP_UNARY_FN

}  // namespace xexp::eval::kernels
