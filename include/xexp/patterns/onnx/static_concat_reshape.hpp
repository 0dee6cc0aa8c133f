#pragma once
// StaticConcatReshape: Reshape(X, Concat(constants..., one unknown (1,) part)) is Reshape(X, constant)
// with -1 for the unknown part: Reshape computes it from the element count. Needs no -1 among the
// constants and allowzero=0 (0 copies an input dimension; with allowzero=1 it cannot sit next to -1).
// A zero-sized input makes -1 ambiguous: such a Reshape fails at run time instead of giving a 0 dim.
#include <optional>
#include <vector>

#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace reshape {
inline bool reshape_allows_zero(const ValueView& reshape) {
  const ir::Attribute* a = rewrite::node_of(reshape).attribute(Symbol("allowzero"));
  return a && a->i != 0;
}
inline bool is_one_element_int64(const ir::Value& v) {
  return v.elem == ElemType::Int64 && v.shape && v.shape->size() == 1 && (*v.shape)[0] == Dim(1);
}
// The shape Concat(parts) with part `unknown` replaced by -1, as one constant when every other part is
// constant (kept by the rules: tested, then folded).
inline std::optional<Tensor> constant_shape_with_minus_one(const ValueView& concat, int64_t unknown) {
  const std::vector<ir::ValueId>& parts = rewrite::node_of(concat).inputs;
  std::vector<int64_t> values;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    if (static_cast<int64_t>(k) == unknown) {
      values.push_back(-1);
      continue;
    }
    std::optional<std::vector<int64_t>> part = int_constant(*concat.graph, parts[k]);
    if (!part) return std::nullopt;
    values.insert(values.end(), part->begin(), part->end());
  }
  return Tensor::from<int64_t>({static_cast<int64_t>(values.size())}, values);
}
inline constexpr auto constant_shape = rewrite::fact<"constant_shape">(constant_shape_with_minus_one);
// The parts of the Concat with part `unknown` replaced by a new constant -1.
inline constexpr auto minus_one_parts =
    rewrite::fact<"minus_one_parts">([](const ValueView& concat, int64_t unknown) {
      const std::vector<ir::ValueId>& inputs = rewrite::node_of(concat).inputs;
      std::vector<rewrite::Part> parts(inputs.begin(), inputs.end());
      parts[static_cast<std::size_t>(unknown)] = Tensor::from<int64_t>({1}, {-1});
      return parts;
    });
// Reshape(x, Concat(parts)) with the part `unknown` (kept by the rule) replaced by -1: a constant shape
// when every other part is constant, else a new Concat.
auto reshape_with_minus_one(const auto& x, const auto& concat, const auto& unknown, const auto& shape) {
  using namespace rewrite::dsl;
  return Reshape(x, choose(has_value(shape), fold(value_of(shape)),
                           Concat(spread(minus_one_parts(concat, unknown)), attr<"axis"> = 0)));
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
}  // namespace reshape

inline rewrite::RulePtr static_concat_reshape_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  auto concat = named<'c'>(shared(Concat(etc)));
  auto reshape = named<'r'>(Reshape(x, concat));  // named: the facts read its allowzero attribute
  auto unknown = keep<'u'>(reshape::only_unknown_part(reshape, concat));
  auto shape = keep<'s'>(reshape::constant_shape(concat, unknown));
  return rule("StaticConcatReshape")
      .match(reshape)
      .when(unknown >= 0)
      .to(reshape::reshape_with_minus_one(x, concat, unknown, shape));
}

}  // namespace xexp::patterns
