#pragma once
// ShapeBasedConstantShapeValue: a shape computation whose every element is known (a static dimension
// picked out of a symbolic shape, seq - seq, Equal(Shape(X), -1) since sizes are never negative)
// becomes that constant, with the type and shape of the value it replaces. Folding cannot see it:
// the inputs are not constant, only what the computation keeps of them is.
#include <optional>
#include <vector>

#include "xexp/patterns/shape_values.hpp"

namespace xexp::patterns {

namespace shape {
inline constexpr auto known_shape_value =
    rewrite::fact<"known_shape_value">([](const ValueView& v) -> std::optional<Tensor> {
      // A graph output keeps its producer: its name is the graph's interface, a constant cannot take it.
      if (v.constant() || v.value().is_graph_output()) return std::nullopt;
      std::optional<std::vector<int64_t>> values = static_shape_value(v);
      if (!values) return std::nullopt;
      std::vector<int64_t> dims;
      for (const Dim& d : *v.shape()) dims.push_back(d.value());
      Tensor t = Tensor::from<int64_t>(dims, *values);
      if (v.elem() == ElemType::Int64) return t;
      return eval::evaluate_op(Symbol("Cast"), {}, {t},
                               {ir::Attribute::make_int("to", static_cast<int64_t>(v.elem()))}, 18, 1)
          .at(0);
    });
}  // namespace shape

inline rewrite::RulePtr shape_based_constant_shape_value_rule() {
  using namespace rewrite::dsl;
  auto computed = named<'o'>(op<detail::kShapeValueOps>(etc));
  auto value = shape::known_shape_value(computed);
  return rule("ShapeBasedConstantShapeValue")
      .match(computed)
      .when(has_value(value))
      .to(fold(value_of(value)));
}

}  // namespace xexp::patterns
