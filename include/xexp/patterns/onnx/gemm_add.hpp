#pragma once
// GemmAdd: a Gemm without C followed by an Add takes the addend as its C, Add(Gemm(a, b), y) =
// Gemm(a, b, y) with beta 1. Backward graphs sum the gradients of an input read by several Linear
// layers this way (the q, k and v projections: three Gemms and two Adds become three chained Gemms).
// y must fit C (Gemm broadcasts C into the product, never the other way), and nothing else may read the
// Gemm. The Gemm keeps its other attributes (transA, transB, alpha).
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr gemm_add_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Var<'y'> y;
  auto gemm = named<'g'>(Gemm(a, b));
  auto sum = named<'s'>(commutative(Add(gemm, y)));
  return rule("GemmAdd")
      .priority(3)
      .match(sum)
      .when(y != gemm && fits_gemm_c(y, gemm, sum))
      .to(rebuild(gemm, input<2> = y, attr<"beta"> = 1.0f));
}

}  // namespace xexp::patterns
