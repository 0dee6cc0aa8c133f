#pragma once
// SwapRangeAddScalar: Range(start, limit, delta) + p with p of shape () or (1,) is
// Range(start + p, limit + p, delta), so that a constant p folds into the bounds. Integer types only: in
// floating point, (limit + p) - (start + p) may round to another length than limit - start (the original
// did not check). A (1,) p is reshaped to a scalar, which Range requires.
#include <optional>

#include "xexp/patterns/constant_facts.hpp"
#include "xexp/patterns/constant_math.hpp"
#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr swap_range_add_scalar_rule() {
  using namespace rewrite::dsl;
  Var<'s'> start;
  Var<'l'> limit;
  Var<'d'> delta;
  Var<'p'> plus;
  auto shifted = [](Rewriter& r, const ValueView& s, const ValueView& l, const ValueView& d,
                    const ValueView& p) -> std::optional<ir::ValueId> {
    ir::ValueId scalar = p.id;
    if (p.shape()->size() == 1) scalar = r.node(Symbol("Squeeze"), {p.id, r.initializer(int64_tensor({0}))});
    const ir::ValueId new_start = r.node(Symbol("Add"), {s.id, scalar});
    const ir::ValueId new_limit = r.node(Symbol("Add"), {l.id, scalar});
    return r.node(Symbol("Range"), {new_start, new_limit, d.id});
  };
  return rule("SwapRangeAddScalar")
      .priority(1)
      .match(commutative(Add(op<"Range">(start, limit, delta), plus)))
      .when(is_scalar(plus) && call("is_integer", is_integer_type, dtype(plus)) && dtype(plus) == dtype(start))
      .to(replace_with("shifted_range", shifted, start, limit, delta, plus));
}

}  // namespace xexp::patterns
