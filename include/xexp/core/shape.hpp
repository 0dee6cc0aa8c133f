#pragma once
// Dimensions and shapes. A dimension is a static size, a symbol ("batch", "a*b"), or unknown; a shape
// is a list of dimensions or, when even the rank is unknown, absent (std::optional<Shape> at use sites).
#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "xexp/core/symbol.hpp"

namespace xexp {

class Dim {
 public:
  constexpr Dim() noexcept = default;  // unknown
  constexpr Dim(int64_t value) noexcept : value_(value) {}  // NOLINT: a size converts to a dimension
  Dim(Symbol symbol) noexcept : symbol_(symbol) {}           // NOLINT
  static Dim symbolic(std::string_view name) { return Dim(Symbol(name)); }

  bool is_static() const noexcept { return value_ >= 0; }
  bool is_symbolic() const noexcept { return !symbol_.empty(); }
  bool is_unknown() const noexcept { return !is_static() && !is_symbolic(); }
  int64_t value() const noexcept { return value_; }  // -1 unless static
  Symbol symbol() const noexcept { return symbol_; }

  // "3", "batch" or "?".
  std::string str() const {
    if (is_static()) return std::to_string(value_);
    if (is_symbolic()) return symbol_.str();
    return "?";
  }
  // The same representation: the same size, the same symbol, or both unknown. Two unknown dimensions
  // are not known to be equal: code deciding equality of sizes checks is_unknown() first.
  friend bool operator==(const Dim& a, const Dim& b) noexcept {
    return a.value_ == b.value_ && a.symbol_ == b.symbol_;
  }

 private:
  int64_t value_ = -1;
  Symbol symbol_;
};

using Shape = std::vector<Dim>;

inline bool is_static(const Shape& shape) {
  for (const Dim& d : shape)
    if (!d.is_static()) return false;
  return true;
}
// Number of elements of a static shape (1 for a scalar); -1 when a dimension is not static, or when
// the sizes multiply past int64 (a declared shape no tensor can have).
inline int64_t element_count(const Shape& shape) {
  int64_t n = 1;
  for (const Dim& d : shape)
    if (!d.is_static() || __builtin_mul_overflow(n, d.value(), &n)) return -1;
  return n;
}
// Whether the static dimensions of `shape` multiply past int64: no tensor that large exists.
inline bool static_sizes_overflow(const Shape& shape) {
  int64_t n = 1;
  for (const Dim& d : shape)
    if (d.is_static() && __builtin_mul_overflow(n, d.value(), &n)) return true;
  return false;
}
inline Shape make_shape(const std::vector<int64_t>& dims) { return Shape(dims.begin(), dims.end()); }
inline std::optional<std::vector<int64_t>> static_dims(const Shape& shape) {
  if (!is_static(shape)) return std::nullopt;
  std::vector<int64_t> out;
  out.reserve(shape.size());
  for (const Dim& d : shape) out.push_back(d.value());
  return out;
}
// "(2, 'a', 3)" style used by the printer and debug dumps: (2,a,3).
inline std::string shape_str(const Shape& shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ",";
    out += shape[i].str();
  }
  return out + ")";
}

}  // namespace xexp
