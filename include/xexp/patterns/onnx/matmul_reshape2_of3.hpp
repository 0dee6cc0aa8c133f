#pragma once
// MatMulReshape2Of3: exporters regroup the batch axes of matrices around a MatMul ((2,3,m,k) viewed as
// (6,m,k) and back). When two of the three Reshapes (left input, right input, result) are there, the
// MatMul can work on the tensors as they were. With static shapes, each Reshape keeping the matrices (last
// two dims) and no batch broadcasting between the inputs:
// - both inputs regrouped alike: MatMul on the tensors as they were, one Reshape of the result;
// - one input and the result regrouped: MatMul on that input as it was, the other input reshaped to
//   its batch layout (not at all when it is a matrix MatMul broadcasts).
// And, with shapes known by size or symbol: the left input's leading axes flattened into rows ((2,3,k) as
// (6,k)), multiplied by a matrix, the result given them back: MatMul on the input as it was. The
// flattening Reshape stays when something else reads it, as the weight's gradient does in training graphs.
// Only data moves: the same bits.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace matmul {
inline std::vector<int64_t> batch_dims(const std::vector<int64_t>& dims) {
  return {dims.begin(), dims.end() - 2};
}
// The Reshape of x into r only regroups the batch axes: static shapes, the last two dims kept.
inline constexpr auto keeps_matrices =
    rewrite::fact<"keeps_matrices">([](const ValueView& x, const ValueView& r) {
      const std::optional<std::vector<int64_t>> dx = static_dims_of(x), dr = static_dims_of(r);
      return dx && dr && dx->size() >= 2 && dr->size() >= 2 &&
             std::equal(dx->end() - 2, dx->end(), dr->end() - 2);
    });
// a and b have static shapes with the same batch axes (MatMul broadcasts nothing between them).
inline bool same_batch_dims(const ValueView& a, const ValueView& b) {
  const std::optional<std::vector<int64_t>> da = static_dims_of(a), db = static_dims_of(b);
  return da && db && da->size() >= 2 && db->size() == da->size() && batch_dims(*da) == batch_dims(*db);
}
inline constexpr auto same_batch = rewrite::fact<"same_batch">(same_batch_dims);
// y is a static matrix, or has the batch axes of the regrouped other input r.
inline constexpr auto matrix_or_same_batch =
    rewrite::fact<"matrix_or_same_batch">([](const ValueView& y, const ValueView& r) {
      const std::optional<std::vector<int64_t>> dy = static_dims_of(y);
      return (dy && dy->size() == 2) || same_batch_dims(y, r);
    });
// out is what MatMul(left, right) gives in the batch layout of `layout`: its batch dims, then the rows
// of left and the columns of right.
inline constexpr auto is_product_in_layout_of = rewrite::fact<"is_product_in_layout_of">(
    [](const ValueView& out, const ValueView& layout, const ValueView& left, const ValueView& right) {
      const std::optional<std::vector<int64_t>> dout = static_dims_of(out), dlayout = static_dims_of(layout),
                                                dleft = static_dims_of(left), dright = static_dims_of(right);
      if (!dout || !dlayout || !dleft || !dright || dlayout->size() < 2 || dleft->size() < 2 ||
          dright->size() < 2)
        return false;
      std::vector<int64_t> expected = batch_dims(*dlayout);
      expected.push_back((*dleft)[dleft->size() - 2]);
      expected.push_back(dright->back());
      return *dout == expected;
    });
// y (..., p, q) reshaped to the batch axes of x: x's batch dims followed by p, q.
inline constexpr auto in_batch_layout_of =
    rewrite::fact<"in_batch_layout_of">([](const ValueView& y, const ValueView& x) {
      std::vector<int64_t> shape = batch_dims(*static_dims_of(x));
      const std::vector<int64_t> dy = *static_dims_of(y);
      shape.insert(shape.end(), dy.end() - 2, dy.end());
      return int64_tensor(shape);
    });
inline constexpr auto static_shape_of =
    rewrite::fact<"static_shape_of">([](const ValueView& v) { return int64_tensor(*static_dims_of(v)); });
inline constexpr auto has_static_shape =
    rewrite::fact<"has_static_shape">([](const ValueView& v) { return static_dims_of(v).has_value(); });
}  // namespace matmul

inline rewrite::RulePtr matmul_reshape2_of3_rule() {
  using namespace rewrite::dsl;
  Var<'a'> a;
  Var<'b'> b;
  Var<'x'> x;
  Var<'s'> s;
  Var<'t'> t;
  Var<'u'> u;
  auto ra = named<'r'>(Reshape(a, s));
  auto rb = named<'q'>(Reshape(b, t));
  auto product = named<'m'>(MatMul(ra, rb));
  auto left_out = named<'o'>(Reshape(MatMul(ra, x), u));
  auto right_out = named<'p'>(Reshape(MatMul(x, rb), u));
  // x in the batch layout of the input kept as it was (a matrix broadcasts as it is).
  auto rows = named<'f'>(shared(Reshape(a, s)));
  auto rows_product = named<'n'>(MatMul(rows, x));
  auto rows_out = named<'o'>(Reshape(rows_product, u));
  auto x_for_a = choose(rank(x) == 2, x, Reshape(x, fold(matmul::in_batch_layout_of(x, a))));
  auto x_for_b = choose(rank(x) == 2, x, Reshape(x, fold(matmul::in_batch_layout_of(x, b))));
  return rule("MatMulReshape2Of3")
      .priority(1)
      .cases(match(product)
                 .when(matmul::keeps_matrices(a, ra) && matmul::keeps_matrices(b, rb) &&
                       matmul::same_batch(a, b) && matmul::has_static_shape(product))
                 .to(Reshape(MatMul(a, b), fold(matmul::static_shape_of(product)))),
             match(left_out)
                 .when(matmul::keeps_matrices(a, ra) && matmul::matrix_or_same_batch(x, ra) &&
                       matmul::is_product_in_layout_of(left_out, a, a, x))
                 .to(MatMul(a, x_for_a)),
             match(right_out)
                 .when(matmul::keeps_matrices(b, rb) && matmul::matrix_or_same_batch(x, rb) &&
                       matmul::is_product_in_layout_of(right_out, b, x, b))
                 .to(MatMul(x_for_b, b)),
             match(rows_out)
                 .when(rank(x) == 2 && flattens_rows(a, rows) &&
                       restores_leading_axes(rows_out, a, rows_product))
                 .to(MatMul(a, x)));
}

}  // namespace xexp::patterns
