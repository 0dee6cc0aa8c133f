#pragma once
// Facts on element types: which kernels exist for a type. Every facts header starts from this one, which
// brings the DSL's fact and ValueView into xexp::patterns.
#include <cstdint>
#include <optional>

#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

using rewrite::fact;
using rewrite::ValueView;

// ---- element types ----------------------------------------------------------------------------------
inline bool is_integer_type(ElemType t) { return t == ElemType::Int64 || t == ElemType::Int32; }

// The element types ONNX Runtime has com.microsoft activation kernels for (float everywhere, the half
// types on GPUs); not double, which its CPU kernels lack.
inline constexpr auto is_activation_float = fact<"is_activation_float">([](const ValueView& x) {
  const ElemType t = x.elem();
  return t == ElemType::Float || t == ElemType::Float16 || t == ElemType::BFloat16;
});
// The float types of the normalization operators (type constraint T of LayerNormalization and of
// ONNX Runtime's [Skip][Simplified]LayerNormalization).
inline bool is_normalization_type(ElemType t) {
  return t == ElemType::Float || t == ElemType::Double || t == ElemType::Float16 || t == ElemType::BFloat16;
}
inline constexpr auto is_normalization_float =
    fact<"is_normalization_float">([](const ValueView& x) { return is_normalization_type(x.elem()); });
inline constexpr auto is_integer =
    fact<"is_integer">([](const ValueView& x) { return is_integer_type(x.elem()); });
// The float types ONNX Runtime 1.30's CPU kernels cover for arithmetic, activations and reductions:
// not bfloat16 (Add, Softmax, ReduceSum... have no bfloat16 kernel there).
inline bool is_cpu_float_type(ElemType t) {
  return t == ElemType::Float || t == ElemType::Double || t == ElemType::Float16;
}
inline constexpr auto is_cpu_float =
    fact<"is_cpu_float">([](const ValueView& x) { return is_cpu_float_type(x.elem()); });

// ---- float types and casts --------------------------------------------------------------------------
// How finely a float type rounds: 3 double, 2 float, 1 float16 or bfloat16, 0 anything else.
inline int float_precision(ElemType t) {
  switch (t) {
    case ElemType::Double:
      return 3;
    case ElemType::Float:
      return 2;
    case ElemType::Float16:
    case ElemType::BFloat16:
      return 1;
    default:
      return 0;
  }
}
// A value of a float type: double, float, float16 or bfloat16.
inline constexpr auto is_float =
    fact<"is_float">([](const ValueView& x) { return xexp::is_float(x.elem()); });
// Float type t rounds strictly more finely than float type u (u an ElemType, or a Cast's `to`).
inline constexpr auto more_precise = fact<"more_precise">([](ElemType t, auto u) {
  const auto other = static_cast<ElemType>(u);
  return float_precision(other) > 0 && float_precision(t) > float_precision(other);
});
// Casting a value of type `from` to type `through` and back gives it back: float, float16 or bfloat16
// through float or double.
inline constexpr auto exact_round_trip = fact<"exact_round_trip">([](ElemType from, int64_t through) {
  const auto mid = static_cast<ElemType>(through);
  const bool small_float = from == ElemType::Float || from == ElemType::Float16 || from == ElemType::BFloat16;
  return small_float && (mid == ElemType::Float || mid == ElemType::Double);
});
// A value's element type is known and a Cast can take it as `to` without `saturate` (not float8, 17..20).
inline constexpr auto known_cast_target = fact<"known_cast_target">([](const ValueView& like) {
  const auto t = static_cast<int32_t>(like.elem());
  return t != static_cast<int32_t>(ElemType::Undefined) && t < 17;
});
// A value's element type as a Cast's `to` attribute.
inline constexpr auto element_type_of =
    fact<"element_type_of">([](const ValueView& like) { return static_cast<int64_t>(like.elem()); });

// ---- types ONNX Runtime's CPU kernels lack ----------------------------------------------------------
// The type a Range on t runs in, or nullopt when ONNX Runtime has a Range kernel for t (or no type holds
// it).
inline std::optional<ElemType> range_type_for(ElemType t) {
  switch (t) {
    case ElemType::Float16:
    case ElemType::BFloat16:
      return ElemType::Float;
    case ElemType::Int8:
    case ElemType::UInt8:
    case ElemType::UInt16:
      return ElemType::Int32;
    case ElemType::UInt32:
      return ElemType::Int64;
    default:
      return std::nullopt;
  }
}
inline constexpr auto lacks_range_kernel =
    fact<"lacks_range_kernel">([](const ValueView& x) { return range_type_for(x.elem()).has_value(); });
inline constexpr auto range_type =
    fact<"range_type">([](const ValueView& x) { return *range_type_for(x.elem()); });
// The type holding every value of x's type in the same order, in which ONNX Runtime's CPU kernels
// select (ReduceMax, ReduceMin, TopK); nullopt when they have x's type or none fits. ONNX allows uint16
// in TopK only.
inline std::optional<ElemType> exact_selection_type(ElemType t) {
  if (t == ElemType::BFloat16) return ElemType::Float;
  if (t == ElemType::UInt16) return ElemType::Int32;
  if (t == ElemType::UInt32) return ElemType::Int64;
  return std::nullopt;
}
inline constexpr auto lacks_selection_kernel = fact<"lacks_selection_kernel">(
    [](const ValueView& x) { return exact_selection_type(x.elem()).has_value(); });
inline constexpr auto selection_type =
    fact<"selection_type">([](const ValueView& x) { return *exact_selection_type(x.elem()); });

}  // namespace xexp::patterns
