#pragma once
// Element-wise rules: unary ops keep type and shape, binary and variadic ops broadcast, comparisons
// give booleans, Cast changes the type only.
#include "xexp/infer/rule_table.hpp"

namespace xexp::infer {

// Output 0 has the type and shape of input 0 (unary math, activations, Softmax, Clip, ...).
inline void infer_same_as_first(InferContext& c) { c.set_output(0, c.type(0), c.shape(0)); }

// Identity-like ops also forward the tracked content of a shape value.
inline void infer_identity(InferContext& c) {
  infer_same_as_first(c);
  if (auto content = c.value_shape(0); content && c.type(0) == ElemType::Int64) c.set_value_shape(0, *content);
}

// Broadcast of every present input, or nothing when one shape is unknown.
inline std::optional<Shape> broadcast_inputs(InferContext& c, std::size_t first = 0) {
  const Shape* single = nullptr;  // the only shape seen so far, not copied until needed
  std::optional<Shape> out;
  for (std::size_t i = first; i < c.input_count(); ++i) {
    if (!c.has_input(i)) continue;
    if (!c.shape(i)) return std::nullopt;
    if (out) out = c.broadcast(*out, *c.shape(i));
    else if (single) out = c.broadcast(*single, *c.shape(i));
    else single = &*c.shape(i);
  }
  if (!out && single) out = *single;
  return out;
}

// Add, Mul, Max, Sum, ...: the inputs share one type.
inline void infer_broadcast(InferContext& c) { c.set_output(0, c.first_known_type(), broadcast_inputs(c)); }
// Pow, BitShift: the type of the base.
inline void infer_broadcast_first_type(InferContext& c) { c.set_output(0, c.type(0), broadcast_inputs(c)); }
inline void infer_comparison(InferContext& c) { c.set_output(0, ElemType::Bool, broadcast_inputs(c)); }
inline void infer_to_bool(InferContext& c) { c.set_output(0, ElemType::Bool, c.shape(0)); }

inline void infer_where(InferContext& c) {
  ElemType t = c.type(1) != ElemType::Undefined ? c.type(1) : c.type(2);
  c.set_output(0, t, broadcast_inputs(c));
}

inline void infer_cast(InferContext& c) {
  const auto to = static_cast<ElemType>(c.attr_int("to", 0));
  c.set_output(0, to, c.shape(0));
  if (is_integer(to))
    if (auto content = c.value_shape(0)) c.set_value_shape(0, *content);
}
inline void infer_cast_like(InferContext& c) { c.set_output(0, c.type(1), c.shape(0)); }

// Dropout: the output and an optional boolean mask, both of the input's shape.
inline void infer_dropout(InferContext& c) {
  infer_same_as_first(c);
  c.set_output(1, ElemType::Bool, c.shape(0));
}

inline void add_elementwise_rules(RuleTable& t) {
  t.add({"Neg", "Abs", "Exp", "Log", "Sqrt", "Reciprocal", "Relu", "Sigmoid", "Tanh", "Erf", "Sin", "Cos",
         "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Floor", "Ceil", "Round",
         "Not", "Softplus", "Softsign", "Selu", "Elu", "Celu", "HardSigmoid", "HardSwish", "LeakyRelu", "Gelu",
         "Mish", "ThresholdedRelu", "Shrink", "Sign", "Clip", "BitwiseNot", "PRelu", "Softmax", "LogSoftmax",
         "Hardmax", "CumSum", "Trilu", "ScatterND", "ScatterElements", "LpNormalization",
         "MeanVarianceNormalization", "InstanceNormalization", "GroupNormalization",
         "RMSNormalization", "RotaryEmbedding"},
        infer_same_as_first);
  t.add({"Identity"}, infer_identity);
  // Add, Sub, Mul, Div, Equal and Where also compute shape values: shape_ops.hpp registers them.
  t.add({"Max", "Min", "Sum", "Mean", "Mod", "And", "Or", "Xor", "BitwiseAnd", "BitwiseOr", "BitwiseXor"},
        infer_broadcast);
  t.add({"Pow", "BitShift"}, infer_broadcast_first_type);
  t.add({"Less", "Greater", "LessOrEqual", "GreaterOrEqual"}, infer_comparison);
  t.add({"IsNaN", "IsInf"}, infer_to_bool);
  t.add({"Cast"}, infer_cast);
  t.add({"CastLike"}, infer_cast_like);
  t.add({"Dropout"}, infer_dropout);
  t.add(kMsDomain,
        {"Gelu", "FastGelu", "QuickGelu", "RotaryEmbedding", "BiasSoftmax", "SoftmaxGrad", "SoftmaxGrad_13"},
        infer_same_as_first);
  t.add(kMsDomain, {"BiasGelu"}, infer_broadcast);
}

}  // namespace xexp::infer
