#pragma once
// MissingReduceMax (onnxruntime set): ONNX Runtime 1.30's CPU provider has no ReduceMax or ReduceMin
// kernel for bfloat16, uint32 or uint64, types ONNX allows. A maximum selects one of its inputs, so the
// reduction runs exactly in a wider type between two Casts: float for bfloat16, int64 for uint32.
// uint64 has no wider type and stays.
#include <optional>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace detail {
// The type holding every value of x's type in the same order, in which ONNX Runtime's CPU kernels
// select (ReduceMax, ReduceMin, TopK); nullopt when they have x's type or none fits. ONNX allows uint16
// in TopK only.
inline std::optional<ElemType> exact_selection_type(ElemType t) {
  if (t == ElemType::BFloat16) return ElemType::Float;
  if (t == ElemType::UInt16) return ElemType::Int32;
  if (t == ElemType::UInt32) return ElemType::Int64;
  return std::nullopt;
}
inline constexpr auto lacks_selection_kernel = rewrite::fact<"lacks_selection_kernel">(
    [](const ValueView& x) { return exact_selection_type(x.elem()).has_value(); });
inline constexpr auto selection_type =
    rewrite::fact<"selection_type">([](const ValueView& x) { return *exact_selection_type(x.elem()); });
}  // namespace detail

inline rewrite::RulePtr missing_reduce_max_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  auto reduce = named<'r'>(op<"ReduceMax|ReduceMin">(x, etc));
  return rule("MissingReduceMax")
      .priority(1)
      .match(reduce)
      .when(detail::lacks_selection_kernel(x))
      .to(Cast(rebuild(reduce, input<0> = Cast(x, attr<"to"> = detail::selection_type(x))),
               attr<"to"> = dtype(x)));
}

}  // namespace xexp::patterns
