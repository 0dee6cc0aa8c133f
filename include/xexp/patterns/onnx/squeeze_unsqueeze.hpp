#pragma once
// SqueezeUnsqueeze: Unsqueeze(Squeeze(x, a), a) and Squeeze(Unsqueeze(x, a), a) give x back when both
// name the same axes (compared after normalization, which needs the rank for negative axes).
#include <algorithm>
#include <optional>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace reshape {
// Squeeze(x, s) then Unsqueeze(., u): both axes lists are in x's rank.
inline constexpr auto squeeze_then_unsqueeze = rewrite::fact<"squeeze_then_unsqueeze">(
    [](const rewrite::ValueView& x, const std::vector<int64_t>& s, const std::vector<int64_t>& u) {
      std::optional<int64_t> rank;
      if (x.shape()) rank = static_cast<int64_t>(x.shape()->size());
      auto a = normalized_axes(s, rank), b = normalized_axes(u, rank);
      return a && b && *a == *b;
    });
// Unsqueeze(x, u) then Squeeze(., s): both axes lists are in the unsqueezed rank.
inline constexpr auto unsqueeze_then_squeeze = rewrite::fact<"unsqueeze_then_squeeze">(
    [](const rewrite::ValueView& x, const std::vector<int64_t>& u, const std::vector<int64_t>& s) {
      std::optional<int64_t> rank;
      if (x.shape()) rank = static_cast<int64_t>(x.shape()->size() + u.size());
      auto a = normalized_axes(u, rank), b = normalized_axes(s, rank);
      return a && b && *a == *b;
    });
}  // namespace reshape

inline rewrite::RulePtr squeeze_unsqueeze_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Ints<'s'> s;
  Ints<'u'> u;
  return rule("SqueezeUnsqueeze")
      .cases(match(Unsqueeze(Squeeze(x, attr<"axes"> = s), attr<"axes"> = u))
                 .when(reshape::squeeze_then_unsqueeze(x, s, u))
                 .to(x),
             match(Squeeze(Unsqueeze(x, attr<"axes"> = u), attr<"axes"> = s))
                 .when(reshape::unsqueeze_then_squeeze(x, u, s))
                 .to(x));
}

}  // namespace xexp::patterns
