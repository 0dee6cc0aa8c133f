#pragma once
// StaticConcatReshape: Reshape(X, Concat(constants..., one unknown (1,) part)) is Reshape(X, constant)
// with -1 for the unknown part: Reshape computes it from the element count. Needs no -1 among the
// constants and allowzero=0 (0 copies an input dimension; with allowzero=1 it cannot sit next to -1).
// A zero-sized input makes -1 ambiguous: such a Reshape fails at run time instead of giving a 0 dim.
#include <optional>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace detail {
inline bool reshape_allows_zero(const ValueView& reshape) {
  const ir::Attribute* a = rewrite::node_of(reshape).attribute(Symbol("allowzero"));
  return a && a->i != 0;
}
inline bool is_one_element_int64(const ir::Value& v) {
  return v.elem == ElemType::Int64 && v.shape && v.shape->size() == 1 && (*v.shape)[0] == Dim(1);
}
// Builds Reshape(x, parts with part `unknown` replaced by -1): a constant shape when every other part is
// constant, else a new Concat.
inline ir::ValueId reshape_with_minus_one(rewrite::Rewriter& r, ir::ValueId x, std::vector<ir::ValueId> parts,
                                          std::size_t unknown) {
  const ir::Graph& g = r.graph();
  std::vector<int64_t> values;
  bool all_constant = true;
  for (std::size_t k = 0; k < parts.size() && all_constant; ++k) {
    if (k == unknown) {
      values.push_back(-1);
      continue;
    }
    std::optional<std::vector<int64_t>> part = int_constant(g, parts[k]);
    if (part) values.insert(values.end(), part->begin(), part->end());
    all_constant = part.has_value();
  }
  ir::ValueId shape;
  if (all_constant) {
    shape = r.initializer(Tensor::from<int64_t>({static_cast<int64_t>(values.size())}, values));
  } else {
    parts[unknown] = r.initializer(Tensor::from<int64_t>({1}, {-1}));
    shape = r.node(Symbol("Concat"), std::move(parts), {ir::Attribute::make_int("axis", 0)});
  }
  return r.node(Symbol("Reshape"), {x, shape});
}
// The index of the only non-constant part, or -1 (several, none, a -1 among the constants, allowzero).
inline constexpr auto only_unknown_part =
    rewrite::fact<"only_unknown_part">([](const ValueView& reshape, const ValueView& concat) -> int64_t {
      if (reshape_allows_zero(reshape)) return -1;
      const ir::Node& n = rewrite::node_of(concat);
      int64_t unknown = -1;
      for (std::size_t k = 0; k < n.inputs.size(); ++k) {
        if (std::optional<std::vector<int64_t>> values = int_constant(*concat.graph, n.inputs[k])) {
          if (std::find(values->begin(), values->end(), -1) != values->end()) return -1;
          continue;
        }
        if (unknown >= 0 || !is_one_element_int64(concat.graph->value(n.inputs[k]))) return -1;
        unknown = static_cast<int64_t>(k);
      }
      return unknown;
    });
// Reshape(x, Concat(parts)) with part `which` (a fact on the reshape and the concat) replaced by -1.
template <class Which>
auto reshape_with_minus_one_at(Which which) {
  return [which](rewrite::Rewriter& r, const ValueView& x, const ValueView& reshape,
                 const ValueView& concat) -> std::optional<ir::ValueId> {
    return reshape_with_minus_one(r, x.id, rewrite::node_of(concat).inputs,
                                  static_cast<std::size_t>(which.f(reshape, concat)));
  };
}
}  // namespace detail

inline rewrite::RulePtr static_concat_reshape_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  auto concat = named<'c'>(shared(Concat(etc)));
  auto reshape = named<'r'>(Reshape(x, concat));  // named: the facts read its allowzero attribute
  return rule("StaticConcatReshape")
      .match(reshape)
      .when(detail::only_unknown_part(reshape, concat) >= 0)
      .to(replace_with("reshape_with_minus_one", detail::reshape_with_minus_one_at(detail::only_unknown_part),
                       x, reshape, concat));
}

}  // namespace xexp::patterns
