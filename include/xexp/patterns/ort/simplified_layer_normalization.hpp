#pragma once
// SimplifiedLayerNormalization (onnxruntime set): the RMS normalization exporters write,
//   y = x * (1 / Sqrt(ReduceMean(Pow(x, 2), axes=[last], keepdims=1) + eps))   (or Reciprocal(Sqrt))
// becomes SimplifiedLayerNormalization(x, ones, axis=-1, epsilon=eps, stash_type=1) in the default
// domain, where ONNX Runtime registers it (at any opset). Unlike the original, the reduced axis must be
// the last one and keepdims 1: otherwise the decomposition is another function. The scale of ones is an
// initializer when the last dimension is static, else ConstantOfShape(Gather(Shape(x), [-1])).
#include "xexp/patterns/ort/normalization_facts.hpp"
#include "xexp/rewrite/dsl.hpp"

namespace xexp::patterns {

namespace detail {
inline bool last_dim_static(const rewrite::ValueView& x) {
  return x.shape() && !x.shape()->empty() && x.shape()->back().is_static();
}
inline Tensor ones_over_last_axis(const rewrite::ValueView& x) {
  return eval::filled(x.elem(), {x.shape()->back().value()}, 1.0);
}
inline Tensor one_of_type(const rewrite::ValueView& x) { return eval::filled(x.elem(), {1}, 1.0); }
inline Tensor last_index() { return Tensor::from<int64_t>({1}, {-1}); }
}  // namespace detail

inline rewrite::RulePtr simplified_layer_normalization_rule() {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Var<'p'> two;
  Ints<'a'> axes;
  Var<'e'> eps;
  Var<'o'> one;
  auto root = Sqrt(commutative(Add(ReduceMean(Pow(x, two), attr<"axes"> = axes, attr<"keepdims"> = 1), eps)));
  auto fits = call("is_two", [](const ValueView& v) { return detail::is_scalar_constant(v) && detail::scalar_value(v) == 2.f; }, two) &&
              call("is_scalar_constant", detail::is_scalar_constant, eps) &&
              call("is_last_axis_only", detail::is_last_axis_only, axes, x) &&
              call("is_normalization_float", detail::is_normalization_float, dtype(x));
  auto is_one = call("is_one", [](const ValueView& v) { return detail::is_scalar_constant(v) && detail::scalar_value(v) == 1.f; }, one);
  auto scale = choose(call("last_dim_static", detail::last_dim_static, x),
                      fold(call("ones", detail::ones_over_last_axis, x)),
                      op<"ConstantOfShape">(op<"Gather">(op<"Shape">(x), fold(call("last", detail::last_index))),
                                            attr<"value"> = call("one", detail::one_of_type, x)));
  auto normalized = op<"SimplifiedLayerNormalization">(x, scale, attr<"axis"> = -1,
                                                      attr<"epsilon"> = call("epsilon", detail::scalar_value, eps),
                                                      attr<"stash_type"> = 1);
  // The inverse first: it binds x through Pow, so that Mul(x, ...) compares instead of guessing.
  return rule("SimplifiedLayerNormalization")
      .priority(1)
      .cases(match(commutative(Mul(op<"Reciprocal">(root), x))).when(fits).to(normalized),
             match(commutative(Mul(Div(one, root), x))).when(fits && is_one).to(normalized));
}

}  // namespace xexp::patterns
