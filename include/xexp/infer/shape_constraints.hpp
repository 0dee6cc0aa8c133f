#pragma once
// ShapeConstraints: what broadcasting taught us about symbolic dimensions. Broadcasting "a" with "b"
// only succeeds at run time when a == b (or one is 1, which exporters rule out), so the equality is
// recorded instead of losing both names; "a" meeting a static 8 in an output already declared binds
// a = 8. A small union-find over symbol ids.
#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "xexp/core/error.hpp"
#include "xexp/core/shape.hpp"
#include "xexp/core/symbol.hpp"

namespace xexp::infer {

class ShapeConstraints {
 public:
  // The canonical symbol of a's class: the smallest name, so that results do not depend on the order
  // equalities were learned in.
  Symbol representative(Symbol a) const {
    while (a.id() < parent_.size() && !parent_[a.id()].empty()) a = parent_[a.id()];
    return a;
  }
  // Records a == b. Throws when their classes are bound to different static values.
  void add_equal(Symbol a, Symbol b) {
    Symbol ra = representative(a), rb = representative(b);
    if (ra == rb) return;
    auto va = root_value(ra), vb = root_value(rb);
    if (va && vb && *va != *vb)
      throw Error("dimension '" + a.str() + "' = " + std::to_string(*va) + " cannot equal '" + b.str() +
                  "' = " + std::to_string(*vb));
    const std::optional<int64_t> merged = va ? va : vb;
    if (rb.view() < ra.view()) std::swap(ra, rb);
    slot(parent_, rb, Symbol()) = ra;
    if (rb.id() < values_.size()) values_[rb.id()] = kUnbound;
    if (merged) slot(values_, ra, kUnbound) = *merged;
    equalities_.emplace_back(a, b);
  }
  // Records symbol == value. Throws when the class already has another value.
  void bind(Symbol a, int64_t v) {
    Symbol r = representative(a);
    if (auto known = root_value(r)) {
      if (*known != v)
        throw Error("dimension '" + a.str() + "' is " + std::to_string(*known) + ", cannot also be " +
                    std::to_string(v));
      return;
    }
    slot(values_, r, kUnbound) = v;
    bindings_.emplace_back(a, v);
  }
  std::optional<int64_t> value(Symbol a) const { return root_value(representative(a)); }
  // The most precise form of a dimension: its static value when bound, else its class representative.
  Dim canonical(const Dim& d) const {
    if (!d.is_symbolic()) return d;
    const Symbol r = representative(d.symbol());
    if (auto v = root_value(r)) return Dim(*v);
    return Dim(r);
  }
  // True when both dimensions are known to be equal (same size, or symbols of one class).
  bool equal(const Dim& a, const Dim& b) const {
    if (a.is_unknown() || b.is_unknown()) return false;
    return canonical(a) == canonical(b);
  }
  bool equal(const Shape& a, const Shape& b) const {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                              [this](const Dim& x, const Dim& y) { return equal(x, y); });
  }

  // Two dimensions that must be equal (MatMul's inner dimension, a declared shape meeting an inferred
  // one): returns the more precise one; symbols get bound or equated; different sizes throw.
  Dim unify(const Dim& a, const Dim& b) {
    const Dim x = canonical(a), y = canonical(b);
    if (x.is_unknown()) return y;
    if (y.is_unknown() || x == y) return x;
    if (x.is_symbolic() && y.is_symbolic()) add_equal(x.symbol(), y.symbol());
    else if (x.is_symbolic()) bind(x.symbol(), y.value());
    else if (y.is_symbolic()) bind(y.symbol(), x.value());
    else throw Error("dimensions " + x.str() + " and " + y.str() + " differ");
    return canonical(x);
  }
  // `known` keeps its dimensions (filling the unknown ones) and the constraints learn from `other`.
  void merge(Shape& known, const Shape& other) {
    if (known.size() != other.size())
      throw Error("shape " + shape_str(other) + " does not match " + shape_str(known));
    for (std::size_t i = 0; i < known.size(); ++i) {
      if (known[i].is_unknown()) known[i] = other[i];
      else unify(known[i], other[i]);
    }
  }

  // In the order they were learned, for the debug dump.
  const std::vector<std::pair<Symbol, Symbol>>& equalities() const noexcept { return equalities_; }
  const std::vector<std::pair<Symbol, int64_t>>& bindings() const noexcept { return bindings_; }
  bool empty() const noexcept { return equalities_.empty() && bindings_.empty(); }
  std::string str() const {
    std::string out;
    for (auto& [a, b] : equalities_) out += (out.empty() ? "" : ", ") + a.str() + "==" + b.str();
    for (auto& [a, v] : bindings_) out += (out.empty() ? "" : ", ") + a.str() + "==" + std::to_string(v);
    return out;
  }

 private:
  // Flat tables indexed by symbol id (symbols are few and densely numbered): the hot path of every
  // shape rule, canonical(), is two array reads.
  static constexpr int64_t kUnbound = std::numeric_limits<int64_t>::min();
  template <class T>
  static T& slot(std::vector<T>& table, Symbol s, T fill) {
    if (s.id() >= table.size()) table.resize(s.id() + 1, fill);
    return table[s.id()];
  }
  std::optional<int64_t> root_value(Symbol root) const {
    if (root.id() >= values_.size() || values_[root.id()] == kUnbound) return std::nullopt;
    return values_[root.id()];
  }

  std::vector<Symbol> parent_;    // symbol id -> its parent in the union-find, empty for a root
  std::vector<int64_t> values_;   // representative id -> bound size, kUnbound when none
  std::vector<std::pair<Symbol, Symbol>> equalities_;
  std::vector<std::pair<Symbol, int64_t>> bindings_;
};

}  // namespace xexp::infer
