#pragma once
// UnsqueezeUnsqueeze: two Unsqueezes in a row are one, with the first one's axes moved to where they end
// up once the second one's axes are inserted. Negative axes need the input's rank.
#include <algorithm>
#include <optional>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace reshape {
inline constexpr auto merge_axes = rewrite::fact<"merge_axes">(
    [](const rewrite::ValueView& x, const std::vector<int64_t>& first,
       const std::vector<int64_t>& second) -> std::optional<std::vector<int64_t>> {
      const bool negative = std::any_of(first.begin(), first.end(), [](int64_t a) { return a < 0; }) ||
                            std::any_of(second.begin(), second.end(), [](int64_t a) { return a < 0; });
      if (negative && !x.shape()) return std::nullopt;
      const int64_t rank = x.shape() ? static_cast<int64_t>(x.shape()->size()) : 0;
      const auto n1 = static_cast<int64_t>(first.size()), n2 = static_cast<int64_t>(second.size());
      std::vector<int64_t> out;
      for (int64_t a : second) out.push_back(a < 0 ? a + rank + n1 + n2 : a);
      std::sort(out.begin(), out.end());
      for (int64_t a : first) {
        int64_t p = a < 0 ? a + rank + n1 : a;  // position among the axes the second Unsqueeze leaves alone
        int64_t position = 0;
        for (;; ++position)
          if (!std::binary_search(out.begin(), out.end(), position) && p-- == 0) break;
        out.push_back(position);
      }
      std::sort(out.begin(), out.end());
      return out;
    });
}  // namespace reshape

inline rewrite::RulePtr unsqueeze_unsqueeze_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Ints<'f'> first;
  Ints<'s'> second;
  auto merged = reshape::merge_axes(x, first, second);
  return rule("UnsqueezeUnsqueeze")
      .match(Unsqueeze(Unsqueeze(x, attr<"axes"> = first), attr<"axes"> = second))
      .when(has_value(merged))
      .to(Unsqueeze(x, attr<"axes"> = value_of(merged)));
}

}  // namespace xexp::patterns
