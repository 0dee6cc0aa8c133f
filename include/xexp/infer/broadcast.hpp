#pragma once
// Multidirectional (numpy) broadcasting over static, symbolic and unknown dimensions.
#include <algorithm>
#include <string>

#include "xexp/core/error.hpp"
#include "xexp/core/shape.hpp"
#include "xexp/infer/shape_constraints.hpp"

namespace xexp::infer {

// One dimension of the result. 1 yields the other side; "a" with "b" records a == b and yields the
// class representative; "a" with a static n > 1 yields n (a may still be 1, nothing is recorded);
// unknown with a symbol or a static n > 1 yields that side (the only non-failing outcome at run time).
inline Dim broadcast_dim(const Dim& a, const Dim& b, ShapeConstraints& constraints) {
  const Dim x = constraints.canonical(a);
  if (a == b) return x;  // the common case: the same size or symbol on both sides
  const Dim y = constraints.canonical(b);
  if (x.is_static() && x.value() == 1) return y;
  if (y.is_static() && y.value() == 1) return x;
  if (x.is_static() && y.is_static()) {
    if (x.value() != y.value())
      throw Error("cannot broadcast dimension " + x.str() + " with " + y.str());
    return x;
  }
  if (x.is_static()) return x;
  if (y.is_static()) return y;
  if (x.is_symbolic() && y.is_symbolic()) {
    constraints.add_equal(x.symbol(), y.symbol());
    return constraints.canonical(x);
  }
  return x.is_symbolic() ? x : y;
}

// Right-aligned broadcasting of two shapes.
inline Shape broadcast_shapes(const Shape& a, const Shape& b, ShapeConstraints& constraints) {
  const std::size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (std::size_t k = 0; k < rank; ++k) {
    const std::size_t ia = k + a.size(), ib = k + b.size();  // index + rank, shifted to avoid signs
    const Dim da = ia >= rank ? a[ia - rank] : Dim(1);
    const Dim db = ib >= rank ? b[ib - rank] : Dim(1);
    try {
      out[k] = broadcast_dim(da, db, constraints);
    } catch (const Error& e) {
      throw Error(e.cause() + " (shapes " + shape_str(a) + " and " + shape_str(b) + ")");
    }
  }
  return out;
}

}  // namespace xexp::infer
