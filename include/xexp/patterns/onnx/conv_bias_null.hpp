#pragma once
// ConvBiasNull: a Conv whose bias is a constant of zeros computes the same without it.
#include <vector>

#include "xexp/patterns/constant_facts.hpp"
#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

inline rewrite::RulePtr conv_bias_null_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'w'> w;
  Const<'b'> b;
  // A lambda replacement: the new Conv keeps every attribute of the old one, present or not, which
  // attr<...> captures cannot say (absent attributes without a schema default do not match).
  auto without_bias = [](Rewriter& r, const ValueView& input, const ValueView& weight) -> std::optional<ir::ValueId> {
    std::vector<ir::Attribute> attributes = r.graph().node(r.match().root()).attributes;
    return r.node(Symbol("Conv"), {input.id, weight.id}, std::move(attributes));
  };
  return rule("ConvBiasNull")
      .match(op<"Conv">(x, w, b))
      .when(call("all_zero", [](const Tensor& t) { return all_elements_equal(t, 0.0); }, b))
      .to(replace_with("Conv", without_bias, x, w));
}

}  // namespace xexp::patterns
