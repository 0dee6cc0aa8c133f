#pragma once
// FusedMatMulTranspose (onnxruntime set): Transpose(A @ B) swapping the last two axes is B' @ A', which
// com.microsoft FusedMatMul computes from A and B with its transA/transB flags: the Transpose goes. A
// FusedMatMul already transposing an input flips that flag (op(A)' is A when transA is set).
#include <cstdint>

#include "xexp/patterns/ort/fused_matmul.hpp"
#include "xexp/patterns/ort/fused_matmul_x2.hpp"

namespace xexp::patterns {

namespace detail {
// 1 - flag: the FusedMatMul flag of the transposed product.
inline constexpr auto flipped_flag =
    rewrite::fact<"flipped_flag">([](const ValueView& fused, const std::string& name) {
      return static_cast<int64_t>(int_attribute(rewrite::node_of(fused), name.c_str(), 0) != 0 ? 0 : 1);
    });
}  // namespace detail

inline rewrite::RulePtr fused_matmul_transpose_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Ints<'p'> perm;
  auto fused = named<'f'>(FusedMatMul(a, b));
  auto ranks = rank(a) >= 2 && rank(b) >= 2 && dtype(a) == ElemType::Float;
  return rule("FusedMatMulTranspose")
      .priority(3)
      .cases(match(Transpose(MatMul(a, b), attr<"perm"> = perm))
                 .when(ranks && swaps_last_two(perm))
                 .to(FusedMatMul(b, a, attr<"alpha"> = 1.0f, attr<"transA"> = 1, attr<"transB"> = 1)),
             match(Transpose(fused, attr<"perm"> = perm))
                 .when(ranks && swaps_last_two(perm) && detail::no_batch_transpose(fused))
                 .to(rebuild(fused, b, a, attr<"transA"> = detail::flipped_flag(fused, std::string("transB")),
                             attr<"transB"> = detail::flipped_flag(fused, std::string("transA")))));
}

}  // namespace xexp::patterns
