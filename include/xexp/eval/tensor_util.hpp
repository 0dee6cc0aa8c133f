#pragma once
// Building blocks shared by the kernels: dispatch on the element type, conversions between element
// types, broadcasting, and one data-movement primitive (`remap`) that every layout op reduces to.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "xexp/core/checked_int.hpp"
#include "xexp/core/error.hpp"
#include "xexp/core/float16.hpp"
#include "xexp/core/tensor.hpp"

namespace xexp::eval {

template <class T>
struct Tag {
  using type = T;
};

// Calls f(Tag<T>{}) with the C++ type kernels compute with for `t` (float16/bfloat16 excluded: they are
// widened to float before kernels run).
template <class F>
decltype(auto) visit_type(ElemType t, F&& f) {
  switch (t) {
    case ElemType::Float: return f(Tag<float>{});
    case ElemType::Double: return f(Tag<double>{});
    case ElemType::Int64: return f(Tag<int64_t>{});
    case ElemType::Int32: return f(Tag<int32_t>{});
    case ElemType::Int16: return f(Tag<int16_t>{});
    case ElemType::Int8: return f(Tag<int8_t>{});
    case ElemType::UInt64: return f(Tag<uint64_t>{});
    case ElemType::UInt32: return f(Tag<uint32_t>{});
    case ElemType::UInt16: return f(Tag<uint16_t>{});
    case ElemType::UInt8: return f(Tag<uint8_t>{});
    case ElemType::Bool: return f(Tag<bool>{});
    default: throw Error("element type " + std::string(elem_type_name(t)) + " is not supported");
  }
}
// Same, restricted to float and double.
template <class F>
decltype(auto) visit_float_type(ElemType t, F&& f) {
  switch (t) {
    case ElemType::Float: return f(Tag<float>{});
    case ElemType::Double: return f(Tag<double>{});
    default: throw Error("element type " + std::string(elem_type_name(t)) + " is not supported (float expected)");
  }
}

inline bool is_half(ElemType t) noexcept { return t == ElemType::Float16 || t == ElemType::BFloat16; }

// Maximum and minimum as numpy's maximum and minimum, which the ONNX reference implementation uses: a NaN
// operand gives NaN (std::max and std::min give their first operand whenever the comparison fails).
template <class T>
T nan_max(T a, T b) {
  return (a != a || a > b) ? a : b;
}
template <class T>
T nan_min(T a, T b) {
  return (a != a || a < b) ? a : b;
}

// Element k of any numeric tensor as a double / int64 (for reading shapes, indices and scalars).
inline double element_as_double(const Tensor& t, int64_t k) {
  if (t.type() == ElemType::Float16) return half_to_float(t.data<uint16_t>()[k]);
  if (t.type() == ElemType::BFloat16) return bfloat16_to_float(t.data<uint16_t>()[k]);
  return visit_type(t.type(), [&](auto tag) { return static_cast<double>(t.data<typename decltype(tag)::type>()[k]); });
}
// Element k as an int64: exact for the integer types (through a double, int64 values past 2^53 would round),
// saturated for a uint64 past int64's range and for the float types.
inline int64_t element_as_int64(const Tensor& t, int64_t k) {
  switch (t.type()) {
    case ElemType::Int64: return t.data<int64_t>()[k];
    case ElemType::UInt64: return static_cast<int64_t>(std::min<uint64_t>(t.data<uint64_t>()[k], std::numeric_limits<int64_t>::max()));
    case ElemType::Int32: return t.data<int32_t>()[k];
    case ElemType::UInt32: return t.data<uint32_t>()[k];
    default: return saturate_cast<int64_t>(element_as_double(t, k));
  }
}
// Element k of an integer or bool tensor written out exactly (a uint64 past int64's range included).
inline std::string integer_element_text(const Tensor& t, int64_t k) {
  if (t.type() == ElemType::UInt64) return std::to_string(t.data<uint64_t>()[k]);
  return std::to_string(element_as_int64(t, k));
}
inline std::vector<int64_t> as_int64s(const Tensor& t) {
  if (t.type() == ElemType::Int64) return {t.data<int64_t>().begin(), t.data<int64_t>().end()};
  std::vector<int64_t> out(static_cast<std::size_t>(t.size()));
  for (int64_t k = 0; k < t.size(); ++k) out[k] = element_as_int64(t, k);
  return out;
}
// Elements [begin, begin + out.size()) of any numeric tensor as doubles: one dispatch on the type for the
// whole range, where element_as_double dispatches per element (too slow for comparing GBs of outputs).
inline void copy_as_doubles(const Tensor& t, int64_t begin, std::span<double> out) {
  const auto widen = [&](auto values, auto to_double) {
    for (std::size_t k = 0; k < out.size(); ++k) out[k] = to_double(values[begin + static_cast<int64_t>(k)]);
  };
  if (t.type() == ElemType::Float16) return widen(t.data<uint16_t>(), half_to_float);
  if (t.type() == ElemType::BFloat16) return widen(t.data<uint16_t>(), bfloat16_to_float);
  visit_type(t.type(), [&](auto tag) {
    widen(t.data<typename decltype(tag)::type>(), [](auto v) { return static_cast<double>(v); });
  });
}
inline std::vector<double> as_doubles(const Tensor& t) {
  std::vector<double> out(static_cast<std::size_t>(t.size()));
  copy_as_doubles(t, 0, out);
  return out;
}
inline int64_t scalar_int(const Tensor& t) {
  if (t.size() < 1) throw Error("a scalar was expected, got an empty tensor");
  return element_as_int64(t, 0);
}
inline double scalar_double(const Tensor& t) {
  if (t.size() < 1) throw Error("a scalar was expected, got an empty tensor");
  return element_as_double(t, 0);
}

// The shortest text that reads back to the same value (numpy's str of a float32 or float64).
inline std::string format_number(double v, bool single_precision) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "INF" : "-INF";
  char buffer[64];
  auto end = single_precision ? std::to_chars(buffer, buffer + sizeof buffer, static_cast<float>(v)).ptr
                              : std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
  return std::string(buffer, end);
}
inline double parse_number(const std::string& s) {
  std::string low;
  for (char c : s) low += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (low == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (low == "inf" || low == "+inf" || low == "infinity") return std::numeric_limits<double>::infinity();
  if (low == "-inf" || low == "-infinity") return -std::numeric_limits<double>::infinity();
  try {
    return std::stod(s);
  } catch (const std::exception&) {
    throw Error("cannot convert string '" + s + "' to a number");
  }
}

// Cast with ONNX semantics between any two of: the numeric types, float16, bfloat16, bool and string.
inline Tensor cast_tensor(const Tensor& in, ElemType to) {
  if (in.type() == to) return in;
  const int64_t n = in.size();
  if (to == ElemType::String) {
    std::vector<std::string> out(static_cast<std::size_t>(n));
    for (int64_t k = 0; k < n; ++k) {
      if (in.type() == ElemType::Bool) out[k] = in.data<bool>()[k] ? "1" : "0";
      else if (is_integer(in.type())) out[k] = integer_element_text(in, k);
      else out[k] = format_number(element_as_double(in, k), in.type() != ElemType::Double);
    }
    return Tensor::strings(in.dims(), std::move(out));
  }
  Tensor out(to, in.dims());
  // Each loop below reads one typed span: the evaluator widens every float16 and bfloat16 operand to
  // float and back around each node, and a per-element dispatch on the type cost more than the
  // conversion itself (a third of a float16 model's run time).
  if (is_half(to)) {
    auto dst = out.mutable_data<uint16_t>();
    auto narrow = [&](auto value_of) {
      if (to == ElemType::Float16)
        for (int64_t k = 0; k < n; ++k) dst[k] = float_to_half(static_cast<float>(value_of(k)));
      else
        for (int64_t k = 0; k < n; ++k) dst[k] = float_to_bfloat16(static_cast<float>(value_of(k)));
    };
    if (in.type() == ElemType::String) {
      narrow([&](int64_t k) { return parse_number(in.string_data()[k]); });
    } else if (is_half(in.type())) {
      const Tensor wide = cast_tensor(in, ElemType::Float);
      narrow([src = wide.data<float>()](int64_t k) { return src[k]; });
    } else {
      visit_type(in.type(), [&](auto in_tag) {
        narrow([src = in.data<typename decltype(in_tag)::type>()](int64_t k) { return static_cast<double>(src[k]); });
      });
    }
    return out;
  }
  visit_type(to, [&](auto out_tag) {
    using To = typename decltype(out_tag)::type;
    auto dst = out.mutable_data<To>();
    if (in.type() == ElemType::String) {
      for (int64_t k = 0; k < n; ++k) dst[k] = saturate_cast<To>(parse_number(in.string_data()[k]));
    } else if (in.type() == ElemType::Float16) {
      auto src = in.data<uint16_t>();
      for (int64_t k = 0; k < n; ++k) dst[k] = saturate_cast<To>(half_to_float(src[k]));
    } else if (in.type() == ElemType::BFloat16) {
      auto src = in.data<uint16_t>();
      for (int64_t k = 0; k < n; ++k) dst[k] = saturate_cast<To>(bfloat16_to_float(src[k]));
    } else {
      visit_type(in.type(), [&](auto in_tag) {
        auto src = in.data<typename decltype(in_tag)::type>();
        for (int64_t k = 0; k < n; ++k) dst[k] = saturate_cast<To>(src[k]);
      });
    }
  });
  return out;
}

// Throws when a result of `type` and `dims` is not to be allocated (past a tensor's 1 TiB, or the
// thread's ElementCap): kernels call it before they build the index maps such a result needs.
inline void check_allocatable(ElemType type, const std::vector<int64_t>& dims) {
  (void)Tensor::byte_count(type, dims);
  ElementCap::check(dims_element_count(dims));
}

// A tensor of type `type` and shape `dims` holding `value` everywhere.
inline Tensor filled(ElemType type, std::vector<int64_t> dims, double value) {
  Tensor one = cast_tensor(Tensor::scalar<double>(value), type);
  if (type == ElemType::String) {
    check_allocatable(type, dims);
    return Tensor::strings(dims, std::vector<std::string>(dims_element_count(dims), one.string_data()[0]));
  }
  Tensor out(type, std::move(dims));
  const std::size_t s = elem_size(type);
  auto dst = out.mutable_bytes();
  const std::byte* value_bytes = one.bytes().data();
  for (std::size_t k = 0; k < dst.size(); k += s) std::memcpy(dst.data() + k, value_bytes, s);
  return out;
}

// axis in [-rank, rank) -> [0, rank); a scalar has no axis (callers index dims()[axis]).
inline int64_t normalize_axis(int64_t axis, std::size_t rank, const char* what = "axis") {
  const auto r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r)
    throw Error(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
  return axis < 0 ? axis + r : axis;
}

inline std::vector<int64_t> strides_of(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (std::size_t d = dims.size(); d-- > 1;) s[d - 1] = s[d] * dims[d];
  return s;
}

// numpy broadcasting of any number of shapes.
inline std::vector<int64_t> broadcast_dims(const std::vector<const std::vector<int64_t>*>& shapes) {
  std::size_t rank = 0;
  for (auto* s : shapes) rank = std::max(rank, s->size());
  std::vector<int64_t> out(rank, 1);
  for (auto* s : shapes) {
    const std::size_t off = rank - s->size();
    for (std::size_t d = 0; d < s->size(); ++d) {
      const int64_t v = (*s)[d];
      if (v == out[off + d] || v == 1) continue;
      if (out[off + d] != 1) throw Error("shapes " + shape_str(make_shape(*shapes[0])) + " and " + shape_str(make_shape(*s)) + " cannot be broadcast");
      out[off + d] = v;
    }
  }
  return out;
}
// Strides reading `dims` (right aligned) as if it had shape `out` (0 on broadcast dimensions).
inline std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& dims, const std::vector<int64_t>& out) {
  std::vector<int64_t> s(out.size(), 0);
  const std::vector<int64_t> own = strides_of(dims);
  const std::size_t off = out.size() - dims.size();
  for (std::size_t d = 0; d < dims.size(); ++d) s[off + d] = dims[d] == 1 ? 0 : own[d];
  return s;
}

// Visits every element of shape `dims` in row-major order, calling body(k, offsets) where offsets[i] is
// the element's offset in input i whose strides are strides[i].
template <std::size_t K, class Body>
void for_each_strided(const std::vector<int64_t>& dims, const std::array<std::vector<int64_t>, K>& strides, Body&& body) {
  const int64_t n = dims_element_count(dims);
  if (n == 0) return;
  const std::size_t rank = dims.size();
  std::array<int64_t, K> off{};
  if (rank == 0) {
    body(int64_t{0}, off);
    return;
  }
  std::vector<int64_t> idx(rank, 0);
  const int64_t inner = dims[rank - 1];
  std::array<int64_t, K> inner_stride{};
  for (std::size_t i = 0; i < K; ++i) inner_stride[i] = strides[i][rank - 1];
  for (int64_t k = 0; k < n; k += inner) {
    std::array<int64_t, K> o = off;
    for (int64_t j = 0; j < inner; ++j) {
      body(k + j, o);
      for (std::size_t i = 0; i < K; ++i) o[i] += inner_stride[i];
    }
    // odometer over the outer dimensions
    for (std::size_t d = rank - 1; d-- > 0;) {
      ++idx[d];
      for (std::size_t i = 0; i < K; ++i) off[i] += strides[i][d];
      if (idx[d] < dims[d]) break;
      for (std::size_t i = 0; i < K; ++i) off[i] -= strides[i][d] * dims[d];
      idx[d] = 0;
    }
  }
}

// out[k] = f(a[.], b[.]) with broadcasting.
template <class R, class A, class B, class F>
Tensor broadcast_binary(const Tensor& a, const Tensor& b, F&& f) {
  const std::vector<int64_t> dims = broadcast_dims({&a.dims(), &b.dims()});
  Tensor out(elem_type_v<R>, dims);
  auto o = out.mutable_data<R>();
  auto x = a.data<A>();
  auto y = b.data<B>();
  if (a.dims() == b.dims()) {
    for (int64_t k = 0; k < out.size(); ++k) o[k] = f(x[k], y[k]);
  } else if (b.size() == 1) {
    const B v = y[0];
    for (int64_t k = 0; k < out.size(); ++k) o[k] = f(x[k], v);
  } else {
    for_each_strided<2>(dims, {broadcast_strides(a.dims(), dims), broadcast_strides(b.dims(), dims)},
                        [&](int64_t k, const std::array<int64_t, 2>& off) { o[k] = f(x[off[0]], y[off[1]]); });
  }
  return out;
}

// remap's walk: calls visit(k, source offset or -1) for every output element k in order. The outer
// coordinates' offset is computed once per row, the innermost dimension runs in a tight loop: no per-element plan
// (a constant-folded weight Transpose used to allocate 8 bytes of plan per element).
template <class Visit>
void for_each_source(const std::vector<int64_t>& src_strides, const std::vector<int64_t>& out_dims,
                     const std::vector<int64_t>& perm, const std::vector<std::vector<int64_t>>& maps, Visit&& visit) {
  const std::size_t rank = out_dims.size();
  const int64_t n = dims_element_count(out_dims);
  if (n <= 0) return;
  if (rank == 0) {
    visit(0, 0);
    return;
  }
  const std::size_t last = rank - 1;
  const int64_t inner = out_dims[last], inner_stride = src_strides[perm[last]];
  const std::vector<int64_t>& inner_map = maps[last];
  std::vector<int64_t> idx(rank, 0);
  for (int64_t k = 0; k < n; k += inner) {
    int64_t base = 0;
    for (std::size_t d = 0; d < last && base >= 0; ++d) {
      const int64_t c = maps[d][idx[d]];
      base = c < 0 ? -1 : base + c * src_strides[perm[d]];
    }
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t c = inner_map[i];
      visit(k + i, base < 0 || c < 0 ? -1 : base + c * inner_stride);
    }
    for (std::size_t d = last; d-- > 0;) {
      if (++idx[d] < out_dims[d]) break;
      idx[d] = 0;
    }
  }
}

// Copies elements of any type (strings included): out[k] = src[src_index(k)] for the plan given by
// per-dimension coordinate maps. out_dims[d] elements along output dimension d read source dimension
// perm[d] at coordinate maps[d][i] (-1: leave the element of `base`, used by Pad). This single
// primitive implements Transpose, Slice, Expand, Tile, Pad and Gather.
inline Tensor remap(const Tensor& src, const std::vector<int64_t>& out_dims, const std::vector<int64_t>& perm,
                    const std::vector<std::vector<int64_t>>& maps, const Tensor* base = nullptr) {
  const std::vector<int64_t> src_strides = strides_of(src.dims());
  const int64_t n = dims_element_count(out_dims);
  if (src.type() == ElemType::String) {
    check_allocatable(src.type(), out_dims);
    std::vector<std::string> out = base ? base->string_data() : std::vector<std::string>(n);
    const auto& in = src.string_data();
    for_each_source(src_strides, out_dims, perm, maps, [&](int64_t k, int64_t from) {
      if (from >= 0) out[k] = in[from];
    });
    return Tensor::strings(out_dims, std::move(out));
  }
  Tensor out = base ? *base : Tensor(src.type(), out_dims);
  auto dst = out.mutable_bytes();
  auto in = src.bytes();
  const std::size_t s = elem_size(src.type());
  auto copy = [&](auto size_tag) {
    constexpr std::size_t S = decltype(size_tag)::value;
    for_each_source(src_strides, out_dims, perm, maps, [&](int64_t k, int64_t from) {
      if (from >= 0) std::memcpy(dst.data() + k * S, in.data() + from * S, S);
    });
  };
  switch (s) {
    case 1: copy(std::integral_constant<std::size_t, 1>{}); break;
    case 2: copy(std::integral_constant<std::size_t, 2>{}); break;
    case 4: copy(std::integral_constant<std::size_t, 4>{}); break;
    case 8: copy(std::integral_constant<std::size_t, 8>{}); break;
    case 16: copy(std::integral_constant<std::size_t, 16>{}); break;
    default: throw Error("cannot move elements of type " + std::string(elem_type_name(src.type())));
  }
  return out;
}
inline std::vector<int64_t> iota_map(int64_t n, int64_t start = 0, int64_t step = 1) {
  std::vector<int64_t> m(static_cast<std::size_t>(std::max<int64_t>(n, 0)));
  for (int64_t i = 0; i < n; ++i) m[i] = start + i * step;
  return m;
}
inline std::vector<int64_t> identity_perm(std::size_t rank) { return iota_map(static_cast<int64_t>(rank)); }

// Broadcasts `t` to `dims` (numpy rules, output shape = broadcast of both).
inline Tensor expand_to(const Tensor& t, const std::vector<int64_t>& dims) {
  const std::vector<int64_t> out = broadcast_dims({&t.dims(), &dims});
  if (out == t.dims()) return t;
  check_allocatable(t.type(), out);
  const std::size_t off = out.size() - t.rank();
  std::vector<std::vector<int64_t>> maps(out.size());
  std::vector<int64_t> perm(out.size(), 0);
  for (std::size_t d = 0; d < out.size(); ++d) {
    if (d < off) {
      maps[d] = std::vector<int64_t>(out[d], 0);
      continue;
    }
    perm[d] = static_cast<int64_t>(d - off);
    maps[d] = t.dims()[d - off] == 1 ? std::vector<int64_t>(out[d], 0) : iota_map(out[d]);
  }
  if (t.rank() == 0) return remap(t.reshaped({1}), out, perm, maps);
  return remap(t, out, perm, maps);
}

}  // namespace xexp::eval
