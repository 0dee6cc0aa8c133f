#pragma once
// ReshapeMatMulReshape: exporters multiply batched matrices as 3-D: Reshape both (..., m, k) and
// (..., k, n) inputs to (batch, m, k) and (batch, k, n), MatMul, Reshape the result back to
// (..., m, n). MatMul broadcasts over any leading axes, so with the same leading axes on both inputs
// the one MatMul on the original tensors computes it: four nodes become one. The same holds for
// com.microsoft FusedMatMul leaving the batch axes in place (its transA and transB transpose the
// matrices only): dynamic exports reach it when the onnxruntime set fused the keys' Transpose first.
#include "xexp/patterns/facts.hpp"
#include "xexp/patterns/analysis/fused_matmul.hpp"

namespace xexp::patterns {

namespace matmul {
using rewrite::facts::KnownDim;
// The dims of s from `from` on equal those of t from `to` on, known (symbols compare by name).
inline bool same_dims_from(const Shape& s, std::size_t from, const Shape& t, std::size_t to) {
  if (s.size() - from != t.size() - to) return false;
  for (std::size_t k = 0; from + k < s.size(); ++k)
    if (!(KnownDim{s[from + k]} == KnownDim{t[to + k]})) return false;
  return true;
}
// a (..., m, k) and b (..., k, n) of the same rank >= 3 and the same leading axes (matrices transposed
// as the FusedMatMul says); ra and rb their 3-D Reshapes keeping the matrices; out, the product
// reshaped, is (..., m, n).
inline constexpr auto flattened_batch_product = rewrite::fact<"flattened_batch_product">(
    [](const ValueView& a, const ValueView& ra, const ValueView& b, const ValueView& rb, const ValueView& product,
       const ValueView& out) {
      for (const ValueView* v : {&a, &ra, &b, &rb, &out})
        if (!v->shape()) return false;
      const ir::Node& n = rewrite::node_of(product);
      const bool fused = n.op_type == Symbol("FusedMatMul");
      if (fused && !analysis::keeps_batch_axes(n)) return false;
      const bool trans_a = fused && int_attribute(n, "transA", 0), trans_b = fused && int_attribute(n, "transB", 0);
      const Shape &sa = *a.shape(), &sb = *b.shape(), &so = *out.shape();
      const std::size_t r = sa.size();
      if (r < 3 || sb.size() != r || so.size() != r || ra.shape()->size() != 3 || rb.shape()->size() != 3)
        return false;
      const Shape batch_a(sa.begin(), sa.end() - 2), batch_b(sb.begin(), sb.end() - 2);
      Shape expected = batch_a;
      expected.push_back(sa[r - (trans_a ? 1 : 2)]);
      expected.push_back(sb[r - (trans_b ? 2 : 1)]);
      return same_dims_from(batch_a, 0, batch_b, 0) && same_dims_from(sa, r - 2, *ra.shape(), 1) &&
             same_dims_from(sb, r - 2, *rb.shape(), 1) && same_dims_from(so, 0, expected, 0);
    });
}  // namespace matmul

inline rewrite::RulePtr reshape_matmul_reshape_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Var<'s'> s;
  Var<'t'> t;
  Var<'u'> u;
  auto ra = named<'r'>(Reshape(a, s));
  auto rb = named<'q'>(Reshape(b, t));
  auto product = named<'p'>(either(MatMul(ra, rb), FusedMatMul(ra, rb)));
  auto out = named<'o'>(Reshape(product, u));
  return rule("ReshapeMatMulReshape")
      .priority(1)
      .match(out)
      .when(matmul::flattened_batch_product(a, ra, b, rb, product, out))
      .to(rebuild(product, input<0> = a, input<1> = b));
}

}  // namespace xexp::patterns
