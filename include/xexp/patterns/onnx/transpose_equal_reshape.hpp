#pragma once
// TransposeEqualReshape: a Transpose that only moves dimensions of size 1 (the others keep their order)
// does not move any element: it is a Reshape. The new shape copies a dimension that stays in place (0),
// writes static sizes, and uses -1 for at most one moved symbolic dimension.
#include <optional>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace transpose {
// The Reshape target equal to Transpose(x, perm), or nullopt when the Transpose moves data.
inline constexpr auto reshape_equal_to_transpose = rewrite::fact<"reshape_equal_to_transpose">(
    [](const ValueView& x, const std::vector<int64_t>& perm) -> std::optional<std::vector<int64_t>> {
      if (!x.shape() || x.shape()->size() != perm.size()) return std::nullopt;
      const Shape& dims = *x.shape();
      auto is_one = [&](int64_t axis) { return dims[axis].is_static() && dims[axis].value() == 1; };
      int64_t last_kept = -1;
      for (int64_t axis : perm) {
        if (axis < 0 || axis >= static_cast<int64_t>(dims.size())) return std::nullopt;
        if (is_one(axis)) continue;
        if (axis < last_kept) return std::nullopt;  // two dimensions of size != 1 swap: data moves
        last_kept = axis;
      }
      std::vector<int64_t> target;
      bool minus_one = false;
      for (std::size_t k = 0; k < perm.size(); ++k) {
        const Dim& d = dims[perm[k]];
        if (perm[k] == static_cast<int64_t>(k))
          target.push_back(0);
        else if (d.is_static() && d.value() > 0)
          target.push_back(d.value());
        else if (!minus_one) {
          target.push_back(-1);
          minus_one = true;
        } else {
          return std::nullopt;
        }
      }
      return target;
    });
}  // namespace transpose

inline rewrite::RulePtr transpose_equal_reshape_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Ints<'p'> perm;
  auto target = transpose::reshape_equal_to_transpose(x, perm);
  return rule("TransposeEqualReshape")
      .priority(1)
      .match(Transpose(x, attr<"perm"> = perm))
      .when(has_value(target))
      .to(Reshape(x, fold(as_tensor(target))));
}

}  // namespace xexp::patterns
