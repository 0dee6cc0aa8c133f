#pragma once
// ShapeBasedExpandBroadcastMatMul: MatMul(Expand(A, s), B) (or the Expand on B) is MatMul(A, B) when the
// Expand only repeats batch dimensions that MatMul's own batch broadcasting gives: same rank for A, B and
// the output, the last two dimensions of A unchanged by the Expand, and each batch dimension of the
// output held by A or B (the other one 1).
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace shape {
inline constexpr auto matmul_broadcasts_batch = rewrite::fact<"matmul_broadcasts_batch">(
    [](const ValueView& a, const ValueView& expanded, const ValueView& b, const ValueView& out) {
      if (!a.shape() || !expanded.shape() || !b.shape() || !out.shape()) return false;
      const Shape &sa = *a.shape(), &se = *expanded.shape(), &sb = *b.shape(), &so = *out.shape();
      const std::size_t rank = so.size();
      if (rank < 3 || sa.size() != rank || se.size() != rank || sb.size() != rank) return false;
      using rewrite::facts::KnownDim;
      for (std::size_t k = rank - 2; k < rank; ++k)
        if (!(KnownDim{sa[k]} == KnownDim{se[k]})) return false;
      for (std::size_t k = 0; k + 2 < rank; ++k) {
        const bool a_full = KnownDim{sa[k]} == KnownDim{so[k]}, b_full = KnownDim{sb[k]} == KnownDim{so[k]};
        const bool a_one = KnownDim{sa[k]} == 1, b_one = KnownDim{sb[k]} == 1;
        if (!(a_full || a_one) || !(b_full || b_one) || !(a_full || b_full)) return false;
      }
      return true;
    });
}  // namespace shape

inline rewrite::RulePtr shape_based_expand_broadcast_matmul_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Var<'s'> s;
  auto left_expand = named<'e'>(Expand(a, s));
  auto right_expand = named<'e'>(Expand(b, s));
  auto left = named<'m'>(MatMul(left_expand, b));
  auto right = named<'m'>(MatMul(a, right_expand));
  return rule("ShapeBasedExpandBroadcastMatMul")
      .priority(1)
      .cases(match(left).when(shape::matmul_broadcasts_batch(a, left_expand, b, left)).to(MatMul(a, b)),
             match(right).when(shape::matmul_broadcasts_batch(b, right_expand, a, right)).to(MatMul(a, b)));
}

}  // namespace xexp::patterns
