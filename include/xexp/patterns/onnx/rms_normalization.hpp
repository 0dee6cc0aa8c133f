#pragma once
// RMSNormalization (opset >= 23): the RMS normalization exporters write,
//   y = x * (1 / Sqrt(ReduceMean(Pow(x, 2), axes=[last], keepdims=1) + eps))
// with Mul(x, x) for the square, and Reciprocal(Sqrt(...)) or x / Sqrt(...) for the division,
// becomes RMSNormalization(x, ones, axis=-1, epsilon=eps, stash_type=1). The reduced axis must be the
// last one and keepdims 1: otherwise the decomposition is another function. The scale of ones is an
// initializer when the last dimension is static, else ConstantOfShape(Gather(Shape(x), [-1])).
// Half-precision exports (HF Llama's RMSNorm) normalize in float between two Casts,
//   Cast(norm(Cast(x, to=FLOAT)), to=half): once the norm is fused, the Cast pair goes too,
// norm(x, ones of x's type, stash_type=1), computed in float from a half x and rounded once. Only for a
// static last dimension (the dynamic ones read Shape of the float value, a reader outside the pair)
// and a scale of ones (no weight in float).
// The onnxruntime set's SimplifiedLayerNormalization is the same rule writing ONNX Runtime's op at any
// opset; listed after this one, at opset 23 it finds the norms already fused. ONNX Runtime's op also
// returns inv_std_var, 1 / Sqrt(...) in float: where a training forward graph keeps the Reciprocal for
// its backward (a graph output), that output takes the Reciprocal's place. RMSNormalization returns Y
// alone.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns {

namespace normalization {
// The rule `name`, writing `Op` (in the default domain) where `opset_fits` holds.
template <rewrite::FixedString Op, class OpsetFits>
rewrite::RulePtr rms_normalization_decomposition(const char* name, OpsetFits opset_fits) {
  using namespace rewrite::dsl;
  Var<'x'> x;
  Ints<'a'> axes;
  Var<'e'> eps;
  Var<'o'> one;
  auto square = either(Pow(x, 2.0), Mul(x, x));
  auto root = Sqrt(commutative(Add(ReduceMean(square, attr<"axes"> = axes, attr<"keepdims"> = 1), eps)));
  auto fits =
      opset_fits && is_scalar_constant(eps) && is_last_axis_only(axes, x) && is_normalization_float(x);
  auto scale = choose(
      has_static_last_dim(x), fold(filled_from(x, -1, 1.0)),
      ConstantOfShape(Gather(op<"Shape">(x), fold(int64_tensor({-1}))), attr<"value"> = one_of_type(x)));
  // The replacement of three cases, printed once.
  auto normalized = named<"normalized">(
      op<Op>(x, scale, attr<"axis"> = -1, attr<"epsilon"> = scalar_float(eps), attr<"stash_type"> = 1));
  Var<'h'> half_x;
  Const<'O'> ones;
  Float<'E'> epsilon;
  Int<'H'> half;
  constexpr int64_t kFloat = static_cast<int64_t>(ElemType::Float);
  auto in_float = op<Op>(Cast(half_x, attr<"to"> = kFloat), ones, attr<"axis"> = -1,
                         attr<"epsilon"> = epsilon, attr<"stash_type"> = 1);
  auto rule_with = [&](const auto&... more_cases) -> rewrite::RulePtr {
    return rule(name).priority(1).cases(
        match(either(commutative(Mul(Reciprocal(root), x)), Div(x, root))).when(fits).to(normalized),
        match(commutative(Mul(Div(one, root), x)))
            .when(fits && is_scalar_constant(one) && scalar_float(one) == 1.0f)
            .to(normalized),
        match(Cast(in_float, attr<"to"> = half))
            .when((dtype(half_x) == ElemType::Float16 || dtype(half_x) == ElemType::BFloat16) &&
                  dtype(half_x) == half && has_static_last_dim(half_x) && all_equal(ones, 1.0))
            .to(op<Op>(half_x, fold(filled_from(half_x, -1, 1.0)), attr<"axis"> = -1,
                       attr<"epsilon"> = epsilon, attr<"stash_type"> = 1)),
        more_cases...);
  };
  if constexpr (Op.view() == "RMSNormalization") {
    return rule_with();
  } else {  // the Reciprocal read elsewhere becomes inv_std_var, float like x (stash_type 1)
    auto inv_std = named<'r'>(shared(Reciprocal(root)));
    auto with_inv_std = let<'n'>(outputs<2>(normalized));
    return rule_with(match(commutative(Mul(inv_std, x)))
                         .when(fits && dtype(x) == kFloat)
                         .to(with_inv_std, also(inv_std, output<1>(with_inv_std))));
  }
}
}  // namespace normalization

inline rewrite::RulePtr rms_normalization_rule() {
  return normalization::rms_normalization_decomposition<"RMSNormalization">("RMSNormalization",
                                                                            rewrite::opset_at_least(23));
}

}  // namespace xexp::patterns
