#pragma once
// MissingReduceMax (onnxruntime set): ONNX Runtime 1.30's CPU provider has no ReduceMax or ReduceMin
// kernel for bfloat16, uint32 or uint64, types ONNX allows. A maximum selects one of its inputs, so the
// reduction runs exactly in a wider type between two Casts: float for bfloat16, int64 for uint32.
// uint64 has no wider type and stays.
#include <optional>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr missing_reduce_max_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  auto reduce = named<'r'>(op<"ReduceMax|ReduceMin">(x, etc));
  return rule("MissingReduceMax")
      .priority(1)
      .match(reduce)
      .when(lacks_selection_kernel(x))
      .to(Cast(rebuild(reduce, input<0> = Cast(x, attr<"to"> = selection_type(x))), attr<"to"> = dtype(x)));
}

}  // namespace xexp::patterns
