#pragma once
// Reading any numeric tensor as doubles: what printers, comparisons and tests need when they do not
// care about the element type (float16/bfloat16 widened, integers and bools converted).
#include <algorithm>
#include <string>
#include <vector>

#include "xexp/core/error.hpp"
#include "xexp/core/float16.hpp"
#include "xexp/core/tensor.hpp"

namespace xexp {

inline bool has_double_view(ElemType type) noexcept {
  return is_float(type) || is_integer(type) || type == ElemType::Bool;
}

// Element `index` (row-major) as a double; throws for strings, complex, float8 and 4-bit types.
inline double element_as_double(const Tensor& t, int64_t index) {
  const auto i = static_cast<std::size_t>(index);
  switch (t.type()) {
    case ElemType::Float: return t.data<float>()[i];
    case ElemType::Double: return t.data<double>()[i];
    case ElemType::Float16: return half_to_float(t.data<uint16_t>()[i]);
    case ElemType::BFloat16: return bfloat16_to_float(t.data<uint16_t>()[i]);
    case ElemType::Int8: return t.data<int8_t>()[i];
    case ElemType::UInt8: return t.data<uint8_t>()[i];
    case ElemType::Int16: return t.data<int16_t>()[i];
    case ElemType::UInt16: return t.data<uint16_t>()[i];
    case ElemType::Int32: return t.data<int32_t>()[i];
    case ElemType::UInt32: return t.data<uint32_t>()[i];
    case ElemType::Int64: return static_cast<double>(t.data<int64_t>()[i]);
    case ElemType::UInt64: return static_cast<double>(t.data<uint64_t>()[i]);
    case ElemType::Bool: return t.data<uint8_t>()[i] != 0 ? 1.0 : 0.0;
    default: throw Error("cannot read a " + std::string(elem_type_name(t.type())) + " tensor as numbers");
  }
}

// The first `limit` elements (all of them when limit < 0) as doubles.
inline std::vector<double> tensor_as_doubles(const Tensor& t, int64_t limit = -1) {
  const int64_t n = limit < 0 ? t.size() : std::min(limit, t.size());
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(n));
  for (int64_t k = 0; k < n; ++k) out.push_back(element_as_double(t, k));
  return out;
}

}  // namespace xexp
