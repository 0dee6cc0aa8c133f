#pragma once
// Matrix products: MatMul (numpy semantics, 1-D operands, broadcast batch dimensions), Gemm and
// com.microsoft FusedMatMul (MatMul with optional transpositions of the last two axes) and FusedGemm.
#include <utility>

#include "xexp/infer/rule_table.hpp"

namespace xexp::infer {

inline std::optional<Shape> matmul_shape(InferContext& c, Shape a, Shape b) {
  if (a.empty() || b.empty()) c.fail("MatMul does not accept scalars");
  const bool vector_a = a.size() == 1, vector_b = b.size() == 1;
  if (vector_a) a.insert(a.begin(), Dim(1));
  if (vector_b) b.push_back(Dim(1));
  c.unify(a.back(), b[b.size() - 2]);
  Shape out = c.broadcast(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
  if (!vector_a) out.push_back(a[a.size() - 2]);
  if (!vector_b) out.push_back(b.back());
  return out;
}

inline void infer_matmul(InferContext& c) {
  std::optional<Shape> out;
  if (c.shape(0) && c.shape(1)) out = matmul_shape(c, *c.shape(0), *c.shape(1));
  c.set_output(0, c.type(0), out);
}

inline void swap_last_two(Shape& s) {
  if (s.size() >= 2) std::swap(s[s.size() - 1], s[s.size() - 2]);
}

inline void infer_gemm(InferContext& c) {
  std::optional<Shape> out;
  if (c.shape(0) && c.shape(1)) {
    Shape a = *c.shape(0), b = *c.shape(1);
    if (a.size() != 2 || b.size() != 2) c.fail("Gemm expects 2-D inputs, got " + shape_str(a) + " and " + shape_str(b));
    if (c.attr_int("transA", 0)) swap_last_two(a);
    if (c.attr_int("transB", 0)) swap_last_two(b);
    out = matmul_shape(c, a, b);
  }
  c.set_output(0, c.type(0), out);
}

inline void infer_fused_matmul(InferContext& c) {
  std::optional<Shape> out;
  const bool batch_transposed = c.attr_int("transBatchA", 0) || c.attr_int("transBatchB", 0);
  if (c.shape(0) && c.shape(1) && !batch_transposed) {
    Shape a = *c.shape(0), b = *c.shape(1);
    if (c.attr_int("transA", 0)) swap_last_two(a);
    if (c.attr_int("transB", 0)) swap_last_two(b);
    out = matmul_shape(c, a, b);
  }
  c.set_output(0, c.type(0), out);
}

inline void add_matmul_rules(RuleTable& t) {
  t.add({"MatMul"}, infer_matmul);
  t.add({"Gemm"}, infer_gemm);
  t.add(kMsDomain, {"FusedGemm"}, infer_gemm);  // Gemm, then an elementwise activation
  t.add(kMsDomain, {"FusedMatMul"}, infer_fused_matmul);
}

}  // namespace xexp::infer
