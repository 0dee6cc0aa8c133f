#pragma once
// Facts on element types: which kernels exist for a type. Every facts header starts from this one, which
// brings the DSL's fact and ValueView into xexp::patterns.
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

}  // namespace xexp::patterns
