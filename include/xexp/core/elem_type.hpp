#pragma once
// Element types, numbered as ONNX's TensorProto.DataType so that conversion is a cast.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace xexp {

enum class ElemType : int32_t {
  Undefined = 0,
  Float = 1,
  UInt8 = 2,
  Int8 = 3,
  UInt16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Double = 11,
  UInt32 = 12,
  UInt64 = 13,
  Complex64 = 14,
  Complex128 = 15,
  BFloat16 = 16,
  Float8E4M3FN = 17,
  Float8E4M3FNUZ = 18,
  Float8E5M2 = 19,
  Float8E5M2FNUZ = 20,
  UInt4 = 21,
  Int4 = 22,
  Float4E2M1 = 23,
};

inline constexpr int kLastElemType = 23;

// Bytes per element; 0 for strings, undefined and the sub-byte types (which pack two per byte).
constexpr std::size_t elem_size(ElemType t) noexcept {
  switch (t) {
    case ElemType::Float: case ElemType::Int32: case ElemType::UInt32: return 4;
    case ElemType::UInt8: case ElemType::Int8: case ElemType::Bool:
    case ElemType::Float8E4M3FN: case ElemType::Float8E4M3FNUZ: case ElemType::Float8E5M2:
    case ElemType::Float8E5M2FNUZ: return 1;
    case ElemType::UInt16: case ElemType::Int16: case ElemType::Float16: case ElemType::BFloat16: return 2;
    case ElemType::Int64: case ElemType::Double: case ElemType::UInt64: case ElemType::Complex64: return 8;
    case ElemType::Complex128: return 16;
    default: return 0;
  }
}

// The upper-case ONNX name: FLOAT, INT64, ...
constexpr std::string_view elem_type_name(ElemType t) noexcept {
  constexpr std::string_view names[] = {
      "UNDEFINED", "FLOAT",  "UINT8",  "INT8",         "UINT16",         "INT16",      "INT32",
      "INT64",     "STRING", "BOOL",   "FLOAT16",      "DOUBLE",         "UINT32",     "UINT64",
      "COMPLEX64", "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
      "FLOAT8E5M2FNUZ", "UINT4", "INT4", "FLOAT4E2M1"};
  auto i = static_cast<int>(t);
  return i >= 0 && i <= kLastElemType ? names[i] : std::string_view("?");
}

// The numpy-like name used by the printer: float32, int64, ...
constexpr std::string_view elem_type_short_name(ElemType t) noexcept {
  constexpr std::string_view names[] = {
      "undefined", "float32", "uint8",  "int8",     "uint16",   "int16",  "int32", "int64",
      "str",       "bool",    "float16", "float64", "uint32",   "uint64", "complex64",
      "complex128", "bfloat16", "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz",
      "uint4", "int4", "float4e2m1"};
  auto i = static_cast<int>(t);
  return i >= 0 && i <= kLastElemType ? names[i] : std::string_view("?");
}

constexpr bool is_float(ElemType t) noexcept {
  return t == ElemType::Float || t == ElemType::Double || t == ElemType::Float16 || t == ElemType::BFloat16;
}
constexpr bool is_integer(ElemType t) noexcept {
  switch (t) {
    case ElemType::UInt8: case ElemType::Int8: case ElemType::UInt16: case ElemType::Int16:
    case ElemType::Int32: case ElemType::Int64: case ElemType::UInt32: case ElemType::UInt64: return true;
    default: return false;
  }
}
constexpr bool is_signed(ElemType t) noexcept {
  return t == ElemType::Int8 || t == ElemType::Int16 || t == ElemType::Int32 || t == ElemType::Int64 ||
         is_float(t);
}
// The relative rounding of a float type (half an ulp of 1), 0 for other types: a rounding error bound
// is a multiple of it.
constexpr double unit_roundoff(ElemType t) noexcept {
  switch (t) {
    case ElemType::Double: return 0x1p-53;
    case ElemType::Float: return 0x1p-24;
    case ElemType::Float16: return 0x1p-11;
    case ElemType::BFloat16: return 0x1p-8;
    default: return 0;
  }
}

// C++ type <-> element type, for the types kernels compute with.
template <class T> struct elem_type_of;
template <> struct elem_type_of<float> { static constexpr ElemType value = ElemType::Float; };
template <> struct elem_type_of<double> { static constexpr ElemType value = ElemType::Double; };
template <> struct elem_type_of<int64_t> { static constexpr ElemType value = ElemType::Int64; };
template <> struct elem_type_of<int32_t> { static constexpr ElemType value = ElemType::Int32; };
template <> struct elem_type_of<int16_t> { static constexpr ElemType value = ElemType::Int16; };
template <> struct elem_type_of<int8_t> { static constexpr ElemType value = ElemType::Int8; };
template <> struct elem_type_of<uint64_t> { static constexpr ElemType value = ElemType::UInt64; };
template <> struct elem_type_of<uint32_t> { static constexpr ElemType value = ElemType::UInt32; };
template <> struct elem_type_of<uint16_t> { static constexpr ElemType value = ElemType::UInt16; };
template <> struct elem_type_of<uint8_t> { static constexpr ElemType value = ElemType::UInt8; };
template <> struct elem_type_of<bool> { static constexpr ElemType value = ElemType::Bool; };
template <class T> inline constexpr ElemType elem_type_v = elem_type_of<T>::value;

}  // namespace xexp
