#pragma once
// TransposeGather: Gather(Transpose(X, perm), i, axis=a) with a rank-0 index i drops dimension a of the
// transposed tensor. When the dimensions left keep X's order (perm without a is increasing), it is
// Gather(X, i, axis=perm[a]) and the Transpose goes.
#include <vector>

#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

namespace transpose {
// perm[axis] (axis may count from the end), or -1 when perm without that axis is not increasing.
inline constexpr auto gathered_input_axis =
    rewrite::fact<"gathered_input_axis">([](const std::vector<int64_t>& perm, int64_t axis) -> int64_t {
      const auto rank = static_cast<int64_t>(perm.size());
      if (axis < 0) axis += rank;
      if (axis < 0 || axis >= rank) return -1;
      int64_t previous = -1;
      for (int64_t k = 0; k < rank; ++k) {
        if (k == axis) continue;
        if (perm[k] < previous) return -1;
        previous = perm[k];
      }
      return perm[axis];
    });
}  // namespace transpose

inline rewrite::RulePtr transpose_gather_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'i'> index;
  Ints<'p'> perm;
  Int<'a'> axis;
  auto input_axis = transpose::gathered_input_axis(perm, axis);
  return rule("TransposeGather")
      .match(Gather(Transpose(x, attr<"perm"> = perm), index, attr<"axis"> = axis))
      .when(rank(index) == 0 && input_axis >= 0)
      .to(Gather(x, index, attr<"axis"> = input_axis));
}

}  // namespace xexp::patterns
