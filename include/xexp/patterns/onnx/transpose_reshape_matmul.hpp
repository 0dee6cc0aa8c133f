#pragma once
// TransposeReshapeMatMul: MatMul(X, Reshape(Transpose(Y, last two axes swapped), S)) where S only
// regroups the leading axes is MatMul(X, Transpose(Reshape(Y, S'), last two swapped)) with S' = S with
// its last two entries swapped: as many nodes, and the Transpose now sits right on the MatMul, where
// TransposeMatMul (2-D, Gemm) or FusedMatMul (onnxruntime set) takes it into a flag. Same for the first
// input.
#include <cstdint>
#include <optional>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace detail {
// The constant shape keeps t's last two axes (static and positive) and has rank 2 or more.
inline constexpr auto keeps_last_two_axes =
    rewrite::fact<"keeps_last_two_axes">([](const ValueView& t, const Tensor& shape) {
      const std::optional<std::vector<int64_t>> s = int_values(shape);
      if (!s || s->size() < 2 || !t.shape() || t.shape()->size() < 2) return false;
      const Shape& d = *t.shape();
      const Dim rows = d[d.size() - 2], cols = d.back();
      return rows.is_static() && cols.is_static() && rows.value() > 0 && cols.value() > 0 &&
             (*s)[s->size() - 2] == rows.value() && s->back() == cols.value();
    });
inline constexpr auto last_two_swapped = rewrite::fact<"last_two_swapped">([](const Tensor& shape) {
  std::vector<int64_t> s = *int_values(shape);
  std::swap(s[s.size() - 2], s[s.size() - 1]);
  return int64_tensor(s);
});
inline constexpr auto matrix_transpose_perm = rewrite::fact<"matrix_transpose_perm">([](const Tensor& shape) {
  std::vector<int64_t> perm;
  for (int64_t k = 0; k < shape.size(); ++k) perm.push_back(k);
  std::swap(perm[perm.size() - 2], perm[perm.size() - 1]);
  return perm;
});
}  // namespace detail

inline rewrite::RulePtr transpose_reshape_matmul_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'y'> y;
  Ints<'p'> perm;
  Const<'s'> shape;
  auto transposed = named<'t'>(Transpose(y, attr<"perm"> = perm));
  auto regrouped = Reshape(transposed, shape, attr<"allowzero"> = 0);
  auto moved = Transpose(Reshape(y, fold(detail::last_two_swapped(shape))),
                         attr<"perm"> = detail::matrix_transpose_perm(shape));
  auto condition = swaps_last_two(perm) && detail::keeps_last_two_axes(transposed, shape);
  return rule("TransposeReshapeMatMul")
      .priority(1)
      .cases(match(MatMul(x, regrouped)).when(condition).to(MatMul(x, moved)),
             match(MatMul(regrouped, x)).when(condition).to(MatMul(moved, x)));
}

}  // namespace xexp::patterns
