#pragma once
// MatMulAdd: MatMul followed by an Add is a Gemm. A 2-D product takes any addend Gemm's C can be (a bias,
// or a whole matrix such as another product). For a first input of rank > 2 (a Linear layer on a batch
// of sequences) the Gemm is wrapped in Reshapes, which needs the leading dims static and a bias vector.
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace detail {
inline constexpr auto all_dims_static = rewrite::fact<"all_dims_static">([](const ValueView& a) {
  if (!a.shape() || a.shape()->size() < 2) return false;
  for (const Dim& d : *a.shape())
    if (!d.is_static()) return false;
  return true;
});
// [-1, K]: the first input flattened to 2-D.
inline constexpr auto flat_shape = rewrite::fact<"flat_shape">([](const ValueView& a) {
  return Tensor::from<int64_t>({2}, {-1, a.shape()->back().value()});
});
// [d0, ..., d(r-2), -1]: the Gemm result back to the MatMul's rank.
inline constexpr auto unflat_shape = rewrite::fact<"unflat_shape">([](const ValueView& a) {
  std::vector<int64_t> dims;
  for (std::size_t k = 0; k + 1 < a.shape()->size(); ++k) dims.push_back((*a.shape())[k].value());
  dims.push_back(-1);
  return int64_tensor(dims);
});
}  // namespace detail

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
  auto reshaped =
      Reshape(Gemm(Reshape(a, fold(detail::flat_shape(a))), b, bias), fold(detail::unflat_shape(a)));
  return rule("MatMulAdd")
      .priority(3)
      .match(sum)
      .when(rank(b) == 2 && bias != mm)
      .when((rank(a) == 2 && fits_gemm_c(bias, mm, sum)) ||
            (rank(a) > 2 && bias_vector && detail::all_dims_static(a)))
      .to(choose(rank(a) == 2, gemm, reshaped));
}

}  // namespace xexp::patterns
