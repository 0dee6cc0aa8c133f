#pragma once
// MatMulAdd: MatMul followed by the Add of a bias is a Gemm. For a first input of rank > 2 (a Linear
// layer on a batch of sequences) the Gemm is wrapped in Reshapes, which needs the leading dims static.
#include <vector>

#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

namespace detail {
inline bool leading_dims_static(const rewrite::ValueView& a) {
  if (!a.shape() || a.shape()->size() < 2) return false;
  for (const Dim& d : *a.shape())
    if (!d.is_static()) return false;
  return true;
}
// [-1, K]: the first input flattened to 2-D.
inline Tensor flat_shape(const rewrite::ValueView& a) {
  return Tensor::from<int64_t>({2}, {-1, a.shape()->back().value()});
}
// [d0, ..., d(r-2), -1]: the Gemm result back to the MatMul's rank.
inline Tensor unflat_shape(const rewrite::ValueView& a) {
  std::vector<int64_t> dims;
  for (std::size_t k = 0; k + 1 < a.shape()->size(); ++k) dims.push_back((*a.shape())[k].value());
  dims.push_back(-1);
  return Tensor::from<int64_t>({static_cast<int64_t>(dims.size())}, dims);
}
}  // namespace detail

inline rewrite::RulePtr matmul_add_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Var<'c'> bias;
  auto mm = named<'m'>(MatMul(a, b));
  auto bias_fits = (rank(bias) == 1 || (rank(bias) == 2 && dim(bias, 0) == 1)) && dim(bias, -1) == dim(b, -1);
  auto gemm = Gemm(a, b, bias);
  auto reshaped = Reshape(Gemm(Reshape(a, fold(call("flat_shape", detail::flat_shape, a))), b, bias),
                          fold(call("unflat_shape", detail::unflat_shape, a)));
  return rule("MatMulAdd")
      .priority(3)
      .match(commutative(Add(mm, bias)))
      .when(rank(b) == 2 && bias != mm && bias_fits)
      .when(rank(a) == 2 || (rank(a) > 2 && call("leading_dims_static", detail::leading_dims_static, a)))
      .to(choose(rank(a) == 2, gemm, reshaped));
}

}  // namespace xexp::patterns
