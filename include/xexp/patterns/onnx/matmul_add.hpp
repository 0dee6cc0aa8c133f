#pragma once
// MatMulAdd: MatMul followed by an Add is a Gemm. A 2-D product takes any addend Gemm's C can be (a bias,
// or a whole matrix such as another product). For a first input of rank > 2 (a Linear layer on a batch
// of sequences) the Gemm is wrapped in Reshapes, which needs the leading dims static and a bias vector.
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr matmul_add_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Var<'B'> bias;
  auto mm = named<'m'>(MatMul(a, b));
  auto sum = named<'s'>(commutative(Add(mm, bias)));
  auto bias_vector =
      (rank(bias) == 1 || (rank(bias) == 2 && dim(bias, 0) == 1)) && dim(bias, -1) == dim(b, -1);
  auto gemm = Gemm(a, b, bias);
  auto reshaped = Reshape(Gemm(Reshape(a, fold(rows_shape(a))), b, bias), fold(leading_axes_shape(a)));
  return rule("MatMulAdd")
      .priority(3)
      .match(sum)
      .when(rank(b) == 2 && bias != mm)
      .when((rank(a) == 2 && fits_gemm_c(bias, mm, sum)) ||
            (rank(a) > 2 && bias_vector && has_static_shape(a)))
      .to(choose(rank(a) == 2, gemm, reshaped));
}

}  // namespace xexp::patterns
