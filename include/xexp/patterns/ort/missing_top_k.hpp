#pragma once
// MissingTopK (onnxruntime set): ONNX Runtime 1.30's CPU provider has TopK kernels for float, double,
// int8, int16, int32, int64 and uint8 only, so a session refuses TopK on bfloat16 (ONNX allows it from
// opset 24), uint16 or uint32. The TopK runs in a wider type holding every value in the same order
// (float, int32, int64): the same elements come first, ties keep their order, so the indices do not
// change, and the values round back exactly. uint64 has no wider type and stays; float16 needs nothing:
// ONNX Runtime inserts those Casts itself. The TopK is shared: its indices output is read too, and the
// new TopK's takes it over.
#include "xexp/patterns/ort/missing_reduce_max.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr missing_top_k_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  auto top = named<'t'>(shared(TopK(x, etc)));
  return rule("MissingTopK")
      .priority(1)
      .match(top)
      .when(lacks_selection_kernel(x))
      .to(Cast(rebuild(top, input<0> = Cast(x, attr<"to"> = selection_type(x))), attr<"to"> = dtype(x)));
}

}  // namespace xexp::patterns
