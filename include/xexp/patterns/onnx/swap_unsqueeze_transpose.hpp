#pragma once
// SwapUnsqueezeTranspose: Transpose(Unsqueeze(X, axes), perm) where perm leaves every inserted axis in
// place is Unsqueeze(Transpose(X, q), axes), q being perm on X's own axes: the Transpose moves the same
// data on a tensor of lower rank, and may meet another Transpose before it.
#include <algorithm>
#include <optional>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace transpose {
// perm restricted to the axes that are not inserted, renumbered as X's axes; nullopt when perm moves an
// inserted axis.
inline constexpr auto perm_without_inserted = rewrite::fact<"perm_without_inserted">(
    [](const std::vector<int64_t>& perm, std::vector<int64_t> axes) -> std::optional<std::vector<int64_t>> {
      const auto rank = static_cast<int64_t>(perm.size());
      for (int64_t& a : axes) {
        if (a < 0) a += rank;
        if (a < 0 || a >= rank || perm[a] != a) return std::nullopt;
      }
      auto inserted = [&](int64_t k) { return std::find(axes.begin(), axes.end(), k) != axes.end(); };
      auto input_axis = [&](int64_t k) {
        return k - std::count_if(axes.begin(), axes.end(), [k](int64_t a) { return a < k; });
      };
      std::vector<int64_t> q;
      for (int64_t k = 0; k < rank; ++k)
        if (!inserted(k)) q.push_back(input_axis(perm[k]));
      return q;
    });
}  // namespace transpose

inline rewrite::RulePtr swap_unsqueeze_transpose_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Ints<'a'> axes;
  Ints<'p'> perm;
  auto q = transpose::perm_without_inserted(perm, axes);
  return rule("SwapUnsqueezeTranspose")
      .match(Transpose(Unsqueeze(x, attr<"axes"> = axes), attr<"perm"> = perm))
      .when(has_value(q))
      .to(Unsqueeze(Transpose(x, attr<"perm"> = value_of(q)), attr<"axes"> = axes));
}

}  // namespace xexp::patterns
