#pragma once
// computes(f, x): a value that an elementwise region (elementwise_region.hpp) of input x computes as the
// known function f, however it is written: x * x * x or Pow(x, 3), the 0.5 first or last, a Sigmoid
// for 0.5 * (1 + tanh). The region is evaluated once on probe points (a dense grid, small and large
// magnitudes, signed zeros, infinities) and compared with f's value in double: a match is the same
// function within rounding, never an approximation of it (an erf Gelu is no tanh Gelu: they differ by up
// to 4.7e-4, thousands of float32 roundings; a constant 0.5001 for 0.5 is no Gelu either).
//
// The tolerance at a point, for a region of type T (unit roundoff u_T):
//   8 * (u_T * |f(x)| + u_double * the largest intermediate)     rounding of f, and of double inside
//   + 2 * how far rounding each number of the region (its constants to T, its float attributes) and
//         each parameter of f (to float) moves the output
//   + T's smallest normal number                                  below it, T holds no relative precision
// The numbers' term is what lets a tanh Gelu with float16 constants be one in float16, where far in
// the tails exp(-2 * 0.79785 * (x + 0.0447 x^3)) amplifies their rounding, and x * HardSigmoid(x) with
// alpha = float(1/6) be HardSwish near its corners; numbers that are multiples of 1/16 (0.5, 1, 3, 6)
// are exact in every type and move nothing.
//
// A function with parameters (QuickGelu's alpha) reads them from the region's values (at x = -1, 0, ...)
// into float captures, as an attribute holds them, and then compares as any other.
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "xexp/rewrite/elementwise_region.hpp"
#include "xexp/rewrite/pattern.hpp"

namespace xexp::rewrite {

// A region's values at the probe points, for reading parameters: at(-1).
struct ProbedValues {
  const std::vector<double>& x;
  const std::vector<double>& y;
  double at(double point) const {
    for (std::size_t k = 0; k < x.size(); ++k)
      if (x[k] == point) return y[k];
    return std::numeric_limits<double>::quiet_NaN();
  }
};

// A function computes() recognizes (patterns/activation_functions.hpp lists them).
struct KnownFunction {
  const char* name;
  int parameters;                                 // 0, 1 or 2 float parameters
  double (*value)(double x, const float* parameters);  // in double, its limits at +-inf included
  bool (*read_parameters)(const ProbedValues& at, float* parameters);  // nullptr without parameters
};

// The probe points, rounded to the region's type. Parameters are read at -1, 0, 1 and 2^-10.
inline std::vector<double> probe_points(ElemType type) {
  static const std::vector<double> base = [] {
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<double> p = {0.0, -0.0};
    for (double v : {std::ldexp(1.0, -10), 1e-3, 1e-6, 12.0, 16.0, 20.0, 30.0, 50.0, 100.0, 500.0, inf}) {
      p.push_back(v);
      p.push_back(-v);
    }
    for (int k = -80; k <= 80; ++k) p.push_back(k / 8.0);  // -10 .. 10 by 1/8, where the functions bend
    return p;
  }();
  if (type == ElemType::Double) return base;
  const Tensor rounded = eval::cast_tensor(Tensor::from<double>({static_cast<int64_t>(base.size())}, base), type);
  return eval::as_doubles(eval::cast_tensor(rounded, ElemType::Double));
}

// The smallest normal number of a float type (its unit roundoff is core's unit_roundoff).
inline double smallest_normal(ElemType t) {
  return t == ElemType::Float16 ? std::ldexp(1.0, -14)
         : t == ElemType::Double ? std::numeric_limits<double>::min()
                                 : static_cast<double>(std::numeric_limits<float>::min());
}

namespace detail {
// A constant an exporter may have rounded: not a multiple of 1/16 of moderate size.
inline bool may_be_rounded(double c) {
  return std::floor(c * 16) != c * 16 || std::abs(c) > 2048;
}
inline std::string number_text(double v) {
  std::string out;
  print_value(out, v);
  return out;
}

// A region evaluated at the probe points of its type, and how far rounding its numbers to their types
// moves its values (measured when first needed: most regions are refused without it).
struct ProbedRegion {
  std::vector<double> x;
  RegionValues values;
  std::optional<std::vector<double>> moved;
};

inline ProbedRegion probe_region(const ir::Graph& g, const ElementwiseRegion& r, int64_t opset) {
  ProbedRegion p{probe_points(r.type), {}, std::nullopt};
  p.values = evaluate_region(g, r, p.x, opset);
  return p;
}

inline const std::vector<double>& moved_by_rounding(const ir::Graph& g, const ElementwiseRegion& r, int64_t opset,
                                                    ProbedRegion& p) {
  if (p.moved) return *p.moved;
  std::vector<double> moved(p.x.size(), 0.0);
  std::size_t number = 0;
  auto add = [&](std::size_t which, double value, ElemType type) {
    const double u = unit_roundoff(type);
    if (u == 0 || !may_be_rounded(value)) return;
    const RegionValues scaled = evaluate_region(g, r, p.x, opset, which, 1 + u);
    for (std::size_t k = 0; k < p.x.size(); ++k)
      if (std::isfinite(scaled.y[k]) && std::isfinite(p.values.y[k])) moved[k] += std::abs(scaled.y[k] - p.values.y[k]);
  };
  for (ir::ValueId c : r.constants) {
    const Tensor& t = *constant_tensor(g, c);
    add(number++, eval::scalar_double(t), t.type());
  }
  for (ir::NodeId id : r.nodes)
    for (const ir::Attribute& a : g.node(id).attributes)
      if (a.type == ir::AttrType::Float) add(number++, a.f, ElemType::Float);
  p.moved = std::move(moved);
  return *p.moved;
}

// Whether the probed region computes f; fills f's parameters, or `why` with the first point where it
// differs. f's parameters are floats: how far their rounding moves f counts as rounding too.
inline bool compare_with(const ir::Graph& g, const ElementwiseRegion& r, int64_t opset, ProbedRegion& p,
                         const KnownFunction& f, float* parameters, std::string* why) {
  const std::vector<double>& xs = p.x;
  const RegionValues& v = p.values;
  if (f.parameters > 0 && !f.read_parameters(ProbedValues{xs, v.y}, parameters)) {
    if (why) *why = std::string("no parameters of ") + f.name + " fit";
    return false;
  }
  const double u = unit_roundoff(r.type), floor = smallest_normal(r.type);
  constexpr double kSlack = 8, u_double = std::numeric_limits<double>::epsilon() / 2;
  std::vector<double> expected(xs.size()), parameters_move(xs.size(), 0.0);
  for (std::size_t k = 0; k < xs.size(); ++k) expected[k] = f.value(xs[k], parameters);
  for (int j = 0; j < f.parameters; ++j) {
    float moved[2] = {parameters[0], f.parameters > 1 ? parameters[1] : 0.f};
    moved[j] = std::nextafter(moved[j], std::numeric_limits<float>::infinity());
    for (std::size_t k = 0; k < xs.size(); ++k) {
      const double d = std::abs(f.value(xs[k], moved) - expected[k]);
      if (std::isfinite(d)) parameters_move[k] += d;
    }
  }
  const std::vector<double>* rounding = nullptr;
  auto first_difference = [&]() -> std::size_t {
    for (std::size_t k = 0; k < xs.size(); ++k) {
      const double y = v.y[k], e = expected[k];
      if (std::isinf(xs[k]) && std::isnan(y)) continue;  // a decomposition's inf * 0
      if (std::isnan(y) || std::isnan(e) || std::isinf(y) || std::isinf(e)) {
        if (y == e || (std::isnan(y) && std::isnan(e))) continue;
        return k;
      }
      const double tolerance = kSlack * (u * std::abs(e) + u_double * v.magnitude[k]) +
                               2 * (parameters_move[k] + (rounding ? (*rounding)[k] : 0.0)) + floor;
      if (std::abs(y - e) > tolerance) return k;
    }
    return xs.size();
  };
  std::size_t k = first_difference();
  if (k < xs.size() && region_numbers(g, r) > 0) {
    rounding = &moved_by_rounding(g, r, opset, p);
    k = first_difference();
  }
  if (k == xs.size()) return true;
  if (why)
    *why = std::string("not ") + f.name + ": " + number_text(v.y[k]) + " at x = " + number_text(xs[k]) +
           " instead of " + number_text(expected[k]);
  return false;
}
}  // namespace detail

// Whether the region computes f, filling f's parameters; or `why` says where it differs. The region's
// values are memoized by region_key (per thread, bounded), so that the rules asking at one node, and
// the copies of one activation across a model, evaluate it once.
inline bool region_computes(const ir::Graph& g, const ElementwiseRegion& r, const KnownFunction& f,
                            int64_t opset, float* parameters, std::string* why) {
  thread_local std::unordered_map<std::string, std::optional<detail::ProbedRegion>> probed;
  std::string key = region_key(g, r);
  auto it = probed.find(key);
  if (it == probed.end()) {
    if (probed.size() >= 1024) probed.clear();
    std::optional<detail::ProbedRegion> p;
    try {
      p = detail::probe_region(g, r, opset);
    } catch (const Error&) {  // a kernel refusing the region's types: it is no known function
    }
    it = probed.emplace(std::move(key), std::move(p)).first;
  }
  if (!it->second) {
    if (why) *why = "the region cannot be evaluated";
    return false;
  }
  return detail::compare_with(g, r, opset, *it->second, f, parameters, why);
}

// The root op types a region of an activation ends with (its last step: x * ..., ... / 6, a Where, the
// Log of a softplus, a clamp).
inline const std::vector<OpKey>& computes_roots() {
  static const std::vector<OpKey> roots = [] {
    std::vector<OpKey> out;
    for (const char* op : {"Mul", "Div", "Add", "Sub", "Where", "Log", "Clip", "Max", "Min"})
      out.push_back({Symbol(""), Symbol(op)});
    return out;
  }();
  return roots;
}

template <class I, class P>
struct Computes : ExprTag {
  const KnownFunction* function;
  I input;
  P parameters;
  std::size_t min_nodes = 2;  // regions_at gives regions of two nodes or more
  static constexpr CaptureMask binds = I::binds | P::binds, uses = I::uses | P::uses;
  static constexpr int depth = 8 + I::depth;  // a tanh Gelu written out is 6 deep
  static constexpr int node_count = static_cast<int>(kMaxRegionNodes) + I::node_count;
  static constexpr CaptureKinds kinds = merge_kinds(kinds_of<I>(), kinds_of<P>());

  // Only regions of at least n nodes: when the replacement is two nodes (HardSwish below opset 14),
  // a region of two would be rewritten into itself.
  Computes at_least(std::size_t n) const {
    Computes out = *this;
    out.min_nodes = n;
    return out;
  }

  static std::vector<OpKey> roots() { return computes_roots(); }
  template <CaptureMask Bound, class K>
  bool match(ir::ValueId v, Match& m, const K& k) const {
    if (v != ir::kNone) {
      const ir::Value& value = m.graph().value(v);
      if (value.producer != ir::kNone && value.output_index == 0) return match_node<Bound>(value.producer, m, k);
    }
    if (m.explaining()) [[unlikely]]
      m.failed(m.mark(), [&] { return printed(*this) + " did not match " + value_label(m.graph(), v); });
    return false;
  }
  template <CaptureMask Bound, class K>
  bool match_node(ir::NodeId id, Match& m, const K& k) const {
    std::string why;
    std::string* reason = m.explaining() ? &why : nullptr;
    for (const ElementwiseRegion& r : regions_at(m.graph(), id, reason)) {
      if (r.nodes.size() < min_nodes) continue;
      const int mark = m.mark();
      bool pushed = true;
      for (ir::NodeId n : r.nodes) pushed = pushed && m.push_node(n, false);
      // The input's pattern first (a cheap refusal), then the function, evaluated once per region.
      std::array<float, 2> values{};
      int computed = -1;
      const bool ok = pushed && input.template match<Bound>(r.input, m, [&] {
        if (computed < 0) {
          std::string differs;
          computed = region_computes(m.graph(), r, *function, m.opset(), values.data(), reason ? &differs : nullptr);
          if (!computed && reason) why = std::move(differs);
        }
        return computed == 1 && bind_parameters<Bound | I::binds>(parameters, values.data(), m) && k();
      });
      if (ok) return true;
      m.rewind(mark);
    }
    if (m.explaining()) [[unlikely]]
      m.failed(m.mark(), [&] {
        const ir::Node& n = m.graph().node(id);
        return printed(*this) + " at " + n.op_type.str() + " '" + n.name +
               "': " + (why.empty() ? "no region of one varying input" : why);
      });
    return false;
  }
  void print(Printer& out) const {
    out += "computes(";
    out += function->name;
    out += ", ";
    input.print(out);
    if constexpr (P::size > 0) {
      out += ", ";
      print_list(out, parameters);
    }
    out += ")";
  }

 private:
  template <CaptureMask Bound, class L>
  static bool bind_parameters(const L& list, const float* values, Match& m) {
    if constexpr (L::size == 0)
      return true;
    else
      return list.head.template match_attribute<Bound>(m.keep(ir::Attribute::make_float(Symbol("value"), *values)), m) &&
             bind_parameters<Bound | decltype(list.head)::binds>(list.tail, values + 1, m);
  }
};

// computes(fn::gelu_tanh, x), computes(fn::quick_gelu, x, alpha): the region ending at the matched
// node computes the function of x, a capture or a pattern (BiasGelu's Add(x, bias)); Float captures
// bind the function's parameters.
template <class I, class... Parameters>
auto computes(const KnownFunction& f, const I& input, const Parameters&... parameters) {
  static_assert(IsExpr<I>, "xexp rule: computes reads a capture or a pattern");
  if (f.parameters != static_cast<int>(sizeof...(Parameters)))
    throw Error(std::string("computes(") + f.name + "): the function has " + std::to_string(f.parameters) +
                " parameters");
  auto list = make_list(parameters...);
  return Computes<I, decltype(list)>{{}, &f, input, list, 2};
}

}  // namespace xexp::rewrite
