#pragma once
// Generated single-operator cases for differential testing of the evaluator against ONNX Runtime:
// for every op the evaluator supports, random inputs and attributes drawn per element type the op's
// schema allows, reaching the corners backend tests leave out (empty and scalar shapes, broadcasting,
// negative and out-of-range axes, starts and indices, NaN and infinities, integer extremes). Each case
// is seeded by its op, type and number alone, so adding an op never changes another op's cases.
#include <onnx/defs/schema.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "xexp/core/float16.hpp"
#include "xexp/core/tensor.hpp"
#include "xexp/eval/tensor_util.hpp"
#include "xexp/ir/attribute.hpp"
#include "xexp/onnx/schema.hpp"
#include "xexp/tools/inputs.hpp"

namespace xexp::testing::differential {

using Dims = std::vector<int64_t>;

// One node to run: its inputs (nullopt: an omitted optional input), attributes and output count.
struct Case {
  std::string op, domain;
  int64_t opset = 18;
  std::vector<std::optional<Tensor>> inputs;
  std::vector<ir::Attribute> attributes;
  std::size_t outputs = 1;

  void in(Tensor t) { inputs.emplace_back(std::move(t)); }
  void none() { inputs.emplace_back(); }
  void attr(ir::Attribute a) { attributes.push_back(std::move(a)); }
  void attr_int(const char* name, int64_t v) {
    attributes.push_back(ir::Attribute::make_int(Symbol(name), v));
  }
  void attr_float(const char* name, float v) {
    attributes.push_back(ir::Attribute::make_float(Symbol(name), v));
  }
  void attr_ints(const char* name, Dims v) {
    attributes.push_back(ir::Attribute::make_ints(Symbol(name), std::move(v)));
  }
  void attr_string(const char* name, std::string v) {
    attributes.push_back(ir::Attribute::make_string(Symbol(name), std::move(v)));
  }
};

// Random draws on splitmix64 (identical on every platform, unlike std's distributions). Two draws never
// go in the arguments of one call: their order there is the compiler's (g++ right to left, clang left
// to right), and the cases must not depend on which compiler built the test.
class Draw {
 public:
  explicit Draw(uint64_t seed) : rng_(seed) {}

  int64_t pick(int64_t lo, int64_t hi) {  // in [lo, hi]
    return lo + static_cast<int64_t>(rng_.next() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool chance(double p) { return rng_.uniform() < p; }
  template <class T>
  T one_of(std::initializer_list<T> values) {
    return *(values.begin() + pick(0, static_cast<int64_t>(values.size()) - 1));
  }
  double uniform(double lo, double hi) { return lo + (hi - lo) * rng_.uniform(); }

  // A shape of rank in [min_rank, max_rank], dimensions in [1, max_dim], now and then an empty one.
  Dims shape(int64_t min_rank, int64_t max_rank, int64_t max_dim = 4, double empty = 0.06) {
    Dims d(static_cast<std::size_t>(pick(min_rank, max_rank)));
    for (int64_t& x : d) x = chance(empty) ? 0 : pick(1, max_dim);
    return d;
  }
  // A shape that broadcasts with `a` (numpy rules): leading dimensions dropped, some others set to 1.
  Dims partner(const Dims& a) {
    Dims b(a.begin() + pick(0, static_cast<int64_t>(a.size())), a.end());
    for (int64_t& x : b)
      if (chance(0.3)) x = 1;
    return b;
  }
  // A permutation of 0..n-1.
  Dims permutation(int64_t n) {
    Dims p(static_cast<std::size_t>(n));
    std::iota(p.begin(), p.end(), 0);
    for (int64_t k = n - 1; k > 0; --k)
      std::swap(p[static_cast<std::size_t>(k)], p[static_cast<std::size_t>(pick(0, k))]);
    return p;
  }
  // An axis of a rank-r tensor, negative half of the time.
  int64_t axis(int64_t r) {
    const int64_t a = pick(0, std::max<int64_t>(r - 1, 0));
    return chance(0.5) ? a - r : a;
  }

  // A floating value: mostly in [-4, 4], sometimes large, sometimes NaN, an infinity or a signed zero.
  double real(bool specials) {
    if (specials && chance(0.08))
      return one_of<double>({std::numeric_limits<double>::quiet_NaN(),
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(), 0.0, -0.0});
    if (chance(0.1)) return uniform(-100, 100);
    return uniform(-4, 4);
  }

  // Values of `type`: floats as real(), integers small ([-6, 6], unsigned [0, 12]) and, when
  // `extremes`, now and then the type's lowest or highest value.
  Tensor values(ElemType type, Dims dims, bool extremes = false, bool specials = true) {
    Tensor t(type, std::move(dims));
    const auto n = static_cast<std::size_t>(t.size());
    auto fill = [&]<class T>() {
      auto out = t.mutable_data<T>();
      for (std::size_t k = 0; k < n; ++k) {
        if (extremes && chance(0.1)) {
          out[k] = chance(0.5) ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
        } else if constexpr (std::is_floating_point_v<T>) {
          out[k] = static_cast<T>(real(specials));
        } else if constexpr (std::is_unsigned_v<T>) {
          out[k] = static_cast<T>(pick(0, 12));
        } else {
          out[k] = static_cast<T>(pick(-6, 6));
        }
      }
    };
    switch (type) {
      case ElemType::Float:
        fill.template operator()<float>();
        break;
      case ElemType::Double:
        fill.template operator()<double>();
        break;
      case ElemType::Int64:
        fill.template operator()<int64_t>();
        break;
      case ElemType::Int32:
        fill.template operator()<int32_t>();
        break;
      case ElemType::Int16:
        fill.template operator()<int16_t>();
        break;
      case ElemType::Int8:
        fill.template operator()<int8_t>();
        break;
      case ElemType::UInt64:
        fill.template operator()<uint64_t>();
        break;
      case ElemType::UInt32:
        fill.template operator()<uint32_t>();
        break;
      case ElemType::UInt16:
        fill.template operator()<uint16_t>();
        break;
      case ElemType::UInt8:
        fill.template operator()<uint8_t>();
        break;
      case ElemType::Bool: {
        auto out = t.mutable_data<bool>();
        for (std::size_t k = 0; k < n; ++k) out[k] = chance(0.5);
        break;
      }
      case ElemType::Float16: {
        auto out = t.mutable_data<uint16_t>();
        for (std::size_t k = 0; k < n; ++k) {
          const double v = extremes && chance(0.1) ? one_of<double>({-65504.0, 65504.0}) : real(specials);
          out[k] = float_to_half(static_cast<float>(v));
        }
        break;
      }
      default:
        throw Error("no generator for element type " + std::string(elem_type_name(type)));
    }
    return t;
  }
  // Strictly positive values (variances, divisors, scales).
  Tensor positive(ElemType type, Dims dims) {
    Tensor d = values(ElemType::Double, dims, false, false);
    auto v = d.mutable_data<double>();
    for (double& x : v) x = std::abs(x) * 0.5 + 0.25;
    return eval::cast_tensor(d, type);
  }
  // Integer tensor of int64 (or int32 when `narrow`) from explicit values.
  static Tensor ints(const Dims& dims, const Dims& v, bool narrow = false) {
    Tensor t = Tensor::from<int64_t>(dims, v);
    return narrow ? eval::cast_tensor(t, ElemType::Int32) : t;
  }
  static Tensor ints1(const Dims& v, bool narrow = false) {
    return ints({static_cast<int64_t>(v.size())}, v, narrow);
  }
  // Indices into a dimension of size d, negative half of the time (d > 0).
  Dims indices(int64_t count, int64_t d) {
    Dims out(static_cast<std::size_t>(count));
    for (int64_t& x : out) x = d > 0 ? pick(0, d - 1) - (chance(0.5) ? d : 0) : 0;
    return out;
  }

 private:
  tools::SplitMix64 rng_;
};

// How outputs are compared: exactly (bytes), or within tolerances scaled by the element type
// (float32 1e-5, float64 1e-10, float16 2e-3, absolute and relative) for ops whose ONNX Runtime
// kernels sum in another order or use vectorized approximations of exp, tanh, erf.
enum class Match { Exact, Close };

struct OpSpec {
  std::string op, domain;
  std::string op_class;  // summary group
  Match match = Match::Exact;
  int64_t cases_per_type = 4;
  std::vector<ElemType> types;  // the element types the case generator is called with
  std::function<void(Draw&, ElemType, Case&)> make;
};

inline std::vector<ElemType> types_onnx_runtime_takes() {
  return {ElemType::Float,  ElemType::Double, ElemType::Float16, ElemType::Int8,
          ElemType::Int16,  ElemType::Int32,  ElemType::Int64,   ElemType::UInt8,
          ElemType::UInt16, ElemType::UInt32, ElemType::UInt64,  ElemType::Bool};
}

// The types ONNX's schema allows for `input` of `op` (its first input by default), among the types
// run_ort.js can feed; nullopt when the registry does not know the op.
inline std::optional<std::vector<ElemType>> schema_types(const std::string& op, const std::string& domain,
                                                         int64_t opset, std::size_t input = 0) {
  const ::onnx::OpSchema* schema = find_schema(op, domain, opset);
  if (!schema || schema->inputs().size() <= input) return std::nullopt;
  const std::string& param = schema->inputs()[input].GetTypeStr();
  std::vector<std::string> allowed{param};
  for (const auto& c : schema->typeConstraintParams())
    if (c.type_param_str == param) allowed = c.allowed_type_strs;
  std::vector<ElemType> out;
  for (ElemType t : types_onnx_runtime_takes()) {
    std::string name(elem_type_name(t));
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (std::find(allowed.begin(), allowed.end(), "tensor(" + name + ")") != allowed.end()) out.push_back(t);
  }
  return out;
}

inline uint64_t case_seed(const std::string& op, ElemType type, int64_t number, uint64_t base) {
  uint64_t h = 1469598103934665603ULL ^ base;  // FNV-1a
  for (char c : op + "/" + std::string(elem_type_name(type)) + "/" + std::to_string(number)) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

}  // namespace xexp::testing::differential
