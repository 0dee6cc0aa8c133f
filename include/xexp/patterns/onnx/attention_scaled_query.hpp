#pragma once
// AttentionScaledQuery (default set) and MultiHeadAttentionScaledQuery (onnxruntime set): a query
// multiplied by a constant before its scores (ViT writes q = q * head_size^-0.5, then q @ k^T) reaches
// Attention or MultiHeadAttention as Reshape(Transpose(q * c, 0,2,1,3)); the constant goes into the scale
// instead: MultiHeadAttention(merged(q * c), k, v, scale=s) = MultiHeadAttention(merged(q), k, v,
// scale=s * c), and the same for Attention.
// The same for a query scaled after its merge (Phi's exports scale q and k by the square root of the
// scale each; the keys' factor, through their repeat for grouped heads, stays).
// The product is rounded once instead of twice, as FusedMatMul's alpha is.
#include "xexp/patterns/analysis/heads_layout.hpp"

namespace xexp::patterns {

template <rewrite::FixedString Op, rewrite::FixedString Domain>
rewrite::RulePtr scaled_query_rule(const char* name) {
  using namespace rewrite::dsl;
  Var<'q'> q;
  Var<'c'> c;
  Var<'h'> hidden_shape;
  Float<'s'> scale;
  auto merged = [&](const auto& x) {
    return Reshape(Transpose(x, attr<"perm"> = analysis::heads_swap()), hidden_shape);
  };
  auto scaled = commutative(Mul(q, c));
  auto split_query = named<'R'>(op<Op, Domain>(merged(scaled), etc, attr<"scale"> = scale));
  auto merged_query = named<'R'>(op<Op, Domain>(scaled, etc, attr<"scale"> = scale));
  auto fits = is_scalar_constant(c) && dtype(c) == dtype(q);
  auto joined = scale * scalar_float(c);
  return rule(name).priority(2).cases(
      match(split_query).when(fits).to(rebuild(split_query, input<0> = merged(q), attr<"scale"> = joined)),
      match(merged_query).when(fits).to(rebuild(merged_query, input<0> = q, attr<"scale"> = joined)));
}

inline rewrite::RulePtr attention_scaled_query_rule() {
  return scaled_query_rule<"Attention", "">("AttentionScaledQuery");
}

}  // namespace xexp::patterns
