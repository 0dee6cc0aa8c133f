#pragma once
// FusedMatMul (onnxruntime set): com.microsoft FusedMatMul computes alpha * op(A) @ op(B), op swapping
// the last two axes when transA/transB is set. A Transpose of the last two axes feeding a MatMul goes
// into transA or transB (not for two 2-D inputs: TransposeMatMul makes a Gemm of those), and a scalar
// Mul or Div after a FusedMatMul goes into alpha.
#include <vector>

#include "xexp/eval/tensor_util.hpp"
#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

namespace detail {
inline bool swaps_last_two(const std::vector<int64_t>& perm) {
  const std::size_t r = perm.size();
  if (r < 2) return false;
  for (std::size_t k = 0; k + 2 < r; ++k)
    if (perm[k] != static_cast<int64_t>(k)) return false;
  return perm[r - 2] == static_cast<int64_t>(r - 1) && perm[r - 1] == static_cast<int64_t>(r - 2);
}
// A lambda replacement: it copies every attribute of the matched FusedMatMul (the transBatch* ones
// included, which a FusedMatMul made elsewhere may carry) and changes only alpha.
inline std::optional<ir::ValueId> rescaled(rewrite::Rewriter& r, const rewrite::ValueView& fused, const Tensor& s,
                                           bool divide) {
  const ir::Node& n = r.graph().node(fused.value().producer);
  std::vector<ir::Attribute> attributes = n.attributes;
  const double factor = eval::scalar_double(s);
  if (divide && factor == 0) return std::nullopt;
  ir::Attribute* alpha = nullptr;
  for (ir::Attribute& a : attributes)
    if (a.name == Symbol("alpha")) alpha = &a;
  if (!alpha) alpha = &attributes.emplace_back(ir::Attribute::make_float("alpha", 1.0f));
  alpha->f = static_cast<float>(divide ? alpha->f / factor : alpha->f * factor);
  return r.node("FusedMatMul", n.inputs, std::move(attributes), "com.microsoft");
}
}  // namespace detail

inline rewrite::RulePtr fused_matmul_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Ints<'p'> perm;
  Const<'s'> s;
  auto fused = named<'f'>(FusedMatMul(a, b));
  auto ranks = rank(a) >= 2 && rank(b) >= 2 && (rank(a) > 2 || rank(b) > 2);
  auto last_two = call("swaps_last_two", detail::swaps_last_two, perm);
  auto scalar_of_its_type = is_scalar(s) && dtype(s) == dtype(fused);
  auto times = [](Rewriter& r, const ValueView& f, const Tensor& t) { return detail::rescaled(r, f, t, false); };
  auto divided = [](Rewriter& r, const ValueView& f, const Tensor& t) { return detail::rescaled(r, f, t, true); };
  return rule("FusedMatMul")
      .priority(2)
      .cases(match(MatMul(Transpose(a, attr<"perm"> = perm), b))
                 .when(ranks && last_two)
                 .to(FusedMatMul(a, b, attr<"alpha"> = 1.0f, attr<"transA"> = 1, attr<"transB"> = 0)),
             match(MatMul(a, Transpose(b, attr<"perm"> = perm)))
                 .when(ranks && last_two)
                 .to(FusedMatMul(a, b, attr<"alpha"> = 1.0f, attr<"transA"> = 0, attr<"transB"> = 1)),
             match(commutative(Mul(fused, s))).when(scalar_of_its_type).to(replace_with("times_alpha", times, fused, s)),
             match(Div(fused, s)).when(scalar_of_its_type).to(replace_with("divide_alpha", divided, fused, s)));
}

}  // namespace xexp::patterns
