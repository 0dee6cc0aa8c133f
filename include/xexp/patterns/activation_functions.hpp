#pragma once
// The activations `computes` recognizes (rewrite/computes.hpp), each as ONNX or ONNX Runtime defines
// it, in double with its limits at +-inf; rules say `computes(fn::gelu_tanh, x)`. A parameter is read
// from the region's values where the function gives it away (QuickGelu's alpha from x = -1, where
// x * sigmoid(alpha x) = -sigmoid(-alpha) is accurate for any alpha).
#include <algorithm>
#include <cmath>
#include <numbers>

#include "xexp/rewrite/computes.hpp"

namespace xexp::patterns::fn {

namespace detail {
inline double sigmoid(double t) { return t >= 0 ? 1 / (1 + std::exp(-t)) : std::exp(t) / (1 + std::exp(t)); }
inline double softplus(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }
// x * s(x) for an s that vanishes at -inf (inf * 0 would be NaN).
inline double times(double x, double s) { return s == 0 ? 0.0 : x * s; }
}  // namespace detail

// Exact Gelu: x * Phi(x) = 0.5 x erfc(-x / sqrt(2)) (erfc keeps the tail's precision).
inline constexpr rewrite::KnownFunction gelu{"gelu", 0,
                                             [](double x, const float*) {
                                               return detail::times(x, 0.5 * std::erfc(-x / std::numbers::sqrt2));
                                             },
                                             nullptr};
// The tanh approximation: 0.5 x (1 + tanh(z)) = x sigmoid(2 z), z = sqrt(2/pi) (x + 0.044715 x^3).
inline constexpr rewrite::KnownFunction gelu_tanh{
    "gelu_tanh", 0,
    [](double x, const float*) {
      const double z = std::sqrt(2 / std::numbers::pi) * (x + 0.044715 * x * x * x);
      return detail::times(x, detail::sigmoid(2 * z));
    },
    nullptr};
// com.microsoft QuickGelu: x sigmoid(alpha x); alpha = 1 is SiLU (Swish), 1.702 CLIP's QuickGelu.
inline constexpr rewrite::KnownFunction quick_gelu{
    "quick_gelu", 1, [](double x, const float* p) { return detail::times(x, detail::sigmoid(p[0] * x)); },
    [](const rewrite::ProbedValues& at, float* p) {
      const double s = -at.at(-1);  // sigmoid(-alpha)
      if (!(s > 0 && s < 1)) return false;
      p[0] = static_cast<float>(std::log1p(-s) - std::log(s));
      return true;
    }};
// HardSigmoid: max(0, min(1, alpha x + beta)); beta is its value at 0, alpha its slope there.
inline constexpr rewrite::KnownFunction hard_sigmoid{
    "hard_sigmoid", 2,
    [](double x, const float* p) { return std::clamp(static_cast<double>(p[0]) * x + p[1], 0.0, 1.0); },
    [](const rewrite::ProbedValues& at, float* p) {
      const double h = std::ldexp(1.0, -10), beta = at.at(0);
      if (!(beta > 0 && beta < 1)) return false;
      p[0] = static_cast<float>((at.at(h) - beta) / h);
      p[1] = static_cast<float>(beta);
      return true;
    }};
// HardSwish: x max(0, min(1, x / 6 + 0.5)).
inline constexpr rewrite::KnownFunction hard_swish{
    "hard_swish", 0, [](double x, const float*) { return detail::times(x, std::clamp(x / 6 + 0.5, 0.0, 1.0)); },
    nullptr};
// Softplus: log(1 + exp(x)).
inline constexpr rewrite::KnownFunction softplus{"softplus", 0,
                                                 [](double x, const float*) { return detail::softplus(x); }, nullptr};
// Mish: x tanh(softplus(x)).
inline constexpr rewrite::KnownFunction mish{
    "mish", 0, [](double x, const float*) { return detail::times(x, std::tanh(detail::softplus(x))); }, nullptr};
// LeakyRelu: x for x >= 0, alpha x below; not alpha = 1, x itself (a Mul by 2 pi then a Div by it).
inline constexpr rewrite::KnownFunction leaky_relu{
    "leaky_relu", 1, [](double x, const float* p) { return x >= 0 ? x : p[0] * x; },
    [](const rewrite::ProbedValues& at, float* p) {
      p[0] = static_cast<float>(-at.at(-1));
      return std::isfinite(p[0]) && p[0] != 1;
    }};
// Elu: x for x > 0, alpha (exp(x) - 1) below.
inline constexpr rewrite::KnownFunction elu{
    "elu", 1, [](double x, const float* p) { return x > 0 ? x : p[0] * std::expm1(x); },
    [](const rewrite::ProbedValues& at, float* p) {
      p[0] = static_cast<float>(at.at(-1) / std::expm1(-1.0));
      return std::isfinite(p[0]);
    }};

}  // namespace xexp::patterns::fn
