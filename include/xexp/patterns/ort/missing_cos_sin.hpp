#pragma once
// MissingCosSin (onnxruntime set): ONNX Runtime 1.30's CPU provider has no bfloat16 kernel for Cos, Sin
// or Log (ONNX allows the type since opsets 22 and 13), so a session refuses such a model. The op runs
// in float between two Casts: bfloat16 widens to float exactly, and the result rounds back once.
// float16 needs nothing: ONNX Runtime inserts those Casts itself.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr missing_cos_sin_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  auto unary = named<'u'>(op<"Cos|Sin|Log">(x));
  return rule("MissingCosSin")
      .priority(1)
      .match(unary)
      .when(dtype(x) == ElemType::BFloat16)
      .to(Cast(rebuild(unary, input<0> = Cast(x, attr<"to"> = ElemType::Float)), attr<"to"> = dtype(x)));
}

}  // namespace xexp::patterns
