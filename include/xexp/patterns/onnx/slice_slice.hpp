#pragma once
// SliceSlice: Slice(Slice(x)) on disjoint axes is one Slice with the starts, ends, axes and steps of
// both (opset >= 10, where they are int64 constant inputs; axes must be given).
#include <algorithm>
#include <set>
#include <vector>

#include "xexp/patterns/facts.hpp"
#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

namespace concat {
// Steps as given, or ones (one per axis) when omitted.
inline std::optional<std::vector<int64_t>> steps_of(const ValueView& steps, const Tensor& axes) {
  if (steps.id == ir::kNone) return std::vector<int64_t>(static_cast<std::size_t>(axes.size()), 1);
  const Tensor* t = steps.constant();
  return t && t->type() == ElemType::Int64 ? int_values(*t) : std::nullopt;
}
inline constexpr auto disjoint = rewrite::fact<"disjoint">(
    [](const ValueView& x, const Tensor& s1, const Tensor& e1, const Tensor& a1, const ValueView& p1,
       const Tensor& s2, const Tensor& e2, const Tensor& a2, const ValueView& p2) {
      for (const Tensor* t : {&s1, &e1, &a1, &s2, &e2, &a2})
        if (t->type() != ElemType::Int64) return false;
      if (!steps_of(p1, a1) || !steps_of(p2, a2)) return false;
      std::set<int64_t> seen;
      for (const Tensor* axes : {&a1, &a2})
        for (int64_t a : axes->data<int64_t>()) {
          if (a < 0) {
            if (!x.shape()) return false;
            a += static_cast<int64_t>(x.shape()->size());
          }
          if (!seen.insert(a).second) return false;
        }
      return true;
    });
inline constexpr auto concat = rewrite::fact<"concat">([](const Tensor& a, const Tensor& b) {
  std::vector<int64_t> out = *int_values(a), more = *int_values(b);
  out.insert(out.end(), more.begin(), more.end());
  return int64_tensor(out);
});
inline constexpr auto concat_steps = rewrite::fact<"concat_steps">(
    [](const ValueView& p1, const Tensor& a1, const ValueView& p2, const Tensor& a2) {
      std::vector<int64_t> out = *steps_of(p1, a1), more = *steps_of(p2, a2);
      out.insert(out.end(), more.begin(), more.end());
      return int64_tensor(out);
    });
}  // namespace concat

inline rewrite::RulePtr slice_slice_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Const<'s'> s1;
  Const<'e'> e1;
  Const<'a'> a1;
  Opt<'p'> p1;
  Const<'S'> s2;
  Const<'E'> e2;
  Const<'A'> a2;
  Opt<'P'> p2;
  return rule("SliceSlice")
      .priority(1)
      .match(Slice(Slice(x, s1, e1, a1, p1), s2, e2, a2, p2))
      .when(opset_at_least(10) && concat::disjoint(x, s1, e1, a1, p1, s2, e2, a2, p2))
      .to(Slice(x, fold(concat::concat(s1, s2)), fold(concat::concat(e1, e2)), fold(concat::concat(a1, a2)),
                fold(concat::concat_steps(p1, a1, p2, a2))));
}

}  // namespace xexp::patterns
