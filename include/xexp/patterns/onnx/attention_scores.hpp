#pragma once
// What the attention rules (onnx/attention.hpp) read of the scores Q K^T * scale and of Q, K, V split in
// heads, and how their writers merge the heads back.
#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "xexp/patterns/analysis/fused_matmul.hpp"
#include "xexp/patterns/analysis/heads_layout.hpp"

namespace xexp::patterns::attention {

// The factor that scales Q K^T in the scores s (q_k is the product): FusedMatMul's alpha, times or divided
// by one-element constants; nullopt for anything else (a per-head scale, a batched transposition).
inline std::optional<float> scale_between(const ValueView& s, const ValueView& q_k) {
  const ir::Graph& g = *s.graph;
  const ir::Node& product = node_of(q_k);
  double scale = 1;
  if (has_op(product, "FusedMatMul")) {
    if (!analysis::keeps_batch_axes(product)) return std::nullopt;
    scale = analysis::alpha_of(q_k);
  }
  if (s.id == q_k.id) return static_cast<float>(scale);
  const ir::Node& n = node_of(s);
  const ir::ValueId other = n.inputs[0] == q_k.id ? n.inputs[1] : n.inputs[0];
  const std::optional<double> c = scalar_constant(g, other);
  if (!c || *c == 0 || !std::isfinite(*c)) return std::nullopt;
  return static_cast<float>(has_op(n, "Div") ? scale / *c : scale * *c);
}
inline constexpr auto attention_scale = rewrite::fact<"attention_scale">(scale_between);

// K^T is GPT-2's Transpose(K', 0,2,3,1): the captured keys are in (batch, sequence, heads, head_size).
inline constexpr auto keys_in_bsnh = rewrite::fact<"keys_in_bsnh">([](const ValueView& q_k) {
  const ir::Node& product = node_of(q_k);
  if (!has_op(product, "MatMul")) return false;
  const ir::Node& transpose = q_k.graph->node(q_k.graph->value(product.inputs[1]).producer);
  const ir::Attribute* perm = transpose.attribute(Symbol("perm"));
  return perm && perm->ints == std::vector<int64_t>{0, 2, 3, 1};
});

// The heads merged into rows, y (batch * sequence, heads * v_head_size), as a Linear on 2-D rows reads
// them: the attention's (batch, sequence, hidden) result is then reshaped to (-1, hidden) (rows_shape).
// Its second dimension fixes the first, the element count being the same.
inline bool merges_into_rows(const ValueView& y) { return has_rank(y, 2); }
inline constexpr auto flattens_rows = rewrite::fact<"flattens_rows">(merges_into_rows);
inline constexpr auto rows_shape = rewrite::fact<"rows_shape">(
    [](const ValueView& y) { return int64_tensor({-1, static_dim(y, 1)}); });
// The attention y, reshaped to rows where the matched heads merged into rows.
inline constexpr auto in_rows = rewrite::piece<"in_rows">([](const auto& heads, const auto& y) {
  using namespace rewrite::dsl;
  return choose(flattens_rows(heads), Reshape(y, fold(rows_shape(heads))), y);
});

// q (batch, heads, sequence, head_size), keys (batch, heads, total, head_size) or, keys_in_bsnh,
// (batch, total, heads, head_size), v (batch, heads, total, v_head_size) and the result y (batch,
// sequence, heads * v_head_size), or its rows (merges_into_rows): same batch everywhere
// (MultiHeadAttention does not broadcast it), heads and head sizes known. y reshapes the heads' result
// without the Transpose that puts the sequence before the heads only for a sequence of one (a decoding
// step, whose Transposes TransposeEqualReshape made Reshapes): the same elements in the same order.
inline constexpr auto heads_fit = rewrite::fact<"heads_fit">(
    [](const ValueView& q, const ValueView& k, const ValueView& v, const ValueView& q_k, const ValueView& y) {
      if (!has_rank(q, 4) || !has_rank(k, 4) || !has_rank(v, 4) || !(has_rank(y, 3) || merges_into_rows(y)))
        return false;
      const int64_t heads = static_dim(q, 1), head_size = static_dim(q, 3), v_head_size = static_dim(v, 3);
      if (heads <= 0 || head_size <= 0 || v_head_size <= 0) return false;
      const bool bsnh = keys_in_bsnh.f(q_k);
      if (!producer_of(*y.graph, node_of(y).inputs[0], "Transpose") && static_dim(q, 2) != 1) return false;
      const KnownDim batch = dim_of(q, 0), total = dim_of(k, bsnh ? 1 : 2);
      const bool merged = merges_into_rows(y) ? dim_of(y, 1) == heads * v_head_size
                                              : dim_of(y, 0) == batch && dim_of(y, 1) == dim_of(q, 2) &&
                                                    dim_of(y, 2) == heads * v_head_size;
      return dim_of(k, 0) == batch && dim_of(k, bsnh ? 2 : 1) == heads && dim_of(k, 3) == head_size &&
             dim_of(v, 0) == batch && dim_of(v, 1) == heads && dim_of(v, 2) == total && merged;
    });
// Single head: q (batch, sequence, size), k (batch, total, size), v (batch, total, v_size).
inline constexpr auto single_head_fits =
    rewrite::fact<"single_head_fits">([](const ValueView& q, const ValueView& k, const ValueView& v) {
      if (!has_rank(q, 3) || !has_rank(k, 3) || !has_rank(v, 3) || static_dim(q, 2) <= 0 ||
          static_dim(v, 2) <= 0)
        return false;
      return dim_of(k, 0) == dim_of(q, 0) && dim_of(v, 0) == dim_of(q, 0) && dim_of(k, 2) == dim_of(q, 2) &&
             dim_of(v, 1) == dim_of(k, 1);
    });
inline constexpr auto heads_of =
    rewrite::fact<"heads_of">([](const ValueView& q) { return static_dim(q, 1); });
// The Reshape target that merges q's heads once transposed to (batch, sequence, heads, head_size): static
// where q's sizes are, so that ReshapeReshape folds it into the Reshape that split the heads; 0 (copy)
// for a dynamic batch or sequence.
inline constexpr auto merged_heads_shape = rewrite::fact<"merged_heads_shape">([](const ValueView& q) {
  return int64_tensor({std::max<int64_t>(static_dim(q, 0), 0), std::max<int64_t>(static_dim(q, 2), 0),
                       static_dim(q, 1) * static_dim(q, 3)});
});
// The same target for keys already in (batch, sequence, heads, head_size) (keys_in_bsnh).
inline constexpr auto merged_bsnh_shape = rewrite::fact<"merged_bsnh_shape">([](const ValueView& k) {
  return int64_tensor({std::max<int64_t>(static_dim(k, 0), 0), std::max<int64_t>(static_dim(k, 1), 0),
                       static_dim(k, 2) * static_dim(k, 3)});
});

// x (batch, heads, sequence, head_size) back to (batch, sequence, heads * head_size).
inline constexpr auto merge_heads = rewrite::piece<"merge_heads">([](const auto& x) {
  using namespace rewrite::dsl;
  return Reshape(Transpose(x, attr<"perm"> = analysis::heads_swap()), fold(merged_heads_shape(x)));
});
// The query as the fused nodes read it, 3-D.
template <class Q>
auto query_3d(const Q& q) {
  return rewrite::named<"query">(merge_heads(q));
}

}  // namespace xexp::patterns::attention
