#pragma once
// Arithmetic, comparisons, unary functions and activations. Torch's type promotion is already resolved
// by the trace: arithmetic runs in the output's dtype (operands are cast to it), comparisons in the
// wider of their operands' dtypes. A Python number given for a tensor argument becomes a scalar
// initializer of that dtype.
#include <cmath>
#include <numbers>
#include <string>

#include "xexp/aten/converter_table.hpp"

namespace xexp::aten {

namespace detail {

// The dtype both operands of a comparison are read in: a float operand wins over an integer or bool one.
inline ElemType comparison_type(NodeLowering& c) {
  const ElemType a = c.has_input(0) ? c.input_type(0) : ElemType::Undefined;
  const ElemType b = c.has_input(1) ? c.input_type(1) : ElemType::Undefined;
  if (a == ElemType::Undefined) return b;
  if (b == ElemType::Undefined) {
    const double other = c.f("other");
    return !is_float(a) && other != std::floor(other) ? ElemType::Float : a;
  }
  if (is_float(a) != is_float(b)) return is_float(a) ? a : b;
  return elem_size(a) >= elem_size(b) ? a : b;
}

template <const char* OnnxOp>
void binary(NodeLowering& c) {
  const ElemType t = c.output_type();
  c.result(c.g.op.call(OnnxOp, {c.operand(0, "self", t), c.operand(1, "other", t)}));
}

template <const char* OnnxOp, bool Negate = false>
void comparison(NodeLowering& c) {
  const ElemType t = comparison_type(c);
  std::string out = c.g.op.call(OnnxOp, {c.operand(0, "self", t), c.operand(1, "other", t)});
  c.result(Negate ? std::string(c.g.op.Not(out)) : out);
}

template <const char* OnnxOp>
void unary(NodeLowering& c) {
  c.result(c.g.op.call(OnnxOp, {c.cast(c.input(0), c.output_type())}));
}

// x or alpha * x: add and sub scale their second operand.
inline std::string scaled_other(NodeLowering& c, ElemType t) {
  std::string other = c.operand(1, "other", t);
  const double alpha = c.f("alpha", 1.0);
  return alpha == 1.0 ? other : std::string(c.g.op.Mul(other, c.constant(alpha, t)));
}

inline constexpr char kAdd[] = "Add", kSub[] = "Sub", kMul[] = "Mul", kMax[] = "Max", kMin[] = "Min", kPow[] = "Pow",
                      kAnd[] = "And", kOr[] = "Or", kXor[] = "Xor", kEqual[] = "Equal", kLess[] = "Less",
                      kLessOrEqual[] = "LessOrEqual", kGreater[] = "Greater", kGreaterOrEqual[] = "GreaterOrEqual",
                      kNeg[] = "Neg", kAbs[] = "Abs", kExp[] = "Exp", kLog[] = "Log", kSqrt[] = "Sqrt", kSin[] = "Sin",
                      kCos[] = "Cos", kTanh[] = "Tanh", kSigmoid[] = "Sigmoid", kRelu[] = "Relu", kErf[] = "Erf",
                      kFloor[] = "Floor", kCeil[] = "Ceil", kReciprocal[] = "Reciprocal", kNot[] = "Not",
                      kSign[] = "Sign", kRound[] = "Round", kIdentity[] = "Identity", kSoftsign[] = "Softsign",
                      kTan[] = "Tan", kAtan[] = "Atan";

inline void add(NodeLowering& c) {
  const ElemType t = c.output_type();
  c.result(c.g.op.Add(c.operand(0, "self", t), scaled_other(c, t)));
}
inline void sub(NodeLowering& c) {
  const ElemType t = c.output_type();
  c.result(c.g.op.Sub(c.operand(0, "self", t), scaled_other(c, t)));
}
// rsub(self, other, alpha) = other - alpha * self.
inline void rsub(NodeLowering& c) {
  const ElemType t = c.output_type();
  std::string self = c.operand(0, "self", t);
  const double alpha = c.f("alpha", 1.0);
  if (alpha != 1.0) self = c.g.op.Mul(self, c.constant(alpha, t));
  c.result(c.g.op.Sub(c.operand(1, "other", t), self));
}
inline void div(NodeLowering& c) {
  const ElemType t = c.output_type();
  const std::string mode = c.s("rounding_mode", "");
  std::string q = c.g.op.Div(c.operand(0, "self", t), c.operand(1, "other", t));
  if (mode == "floor" && is_float(t)) q = c.g.op.Floor(q);
  else if (mode == "trunc" && is_float(t)) q = c.g.op.Mul(c.g.op.Sign(q), c.g.op.Floor(c.g.op.Abs(q)));
  else if (mode == "floor" && !is_float(t)) c.fail("floor division of integers is not supported yet");
  c.result(q);
}
// pow(Tensor, Scalar) keeps an integer exponent in the base's dtype.
inline void pow(NodeLowering& c) {
  const ElemType t = c.output_type();
  const std::string base = c.has_input(0) ? c.cast(c.input(0), t) : c.constant(c.f("self"), t);
  c.result(c.g.op.Pow(base, c.operand(1, "exponent", t)));
}
inline void rsqrt(NodeLowering& c) { c.result(c.g.op.Reciprocal(c.g.op.Sqrt(c.cast(c.input(0), c.output_type())))); }

inline void where(NodeLowering& c) {
  const ElemType t = c.output_type();
  c.result(c.g.op.Where(c.cast(c.input(0), ElemType::Bool), c.operand(1, "self", t), c.operand(2, "other", t)));
}
// masked_fill(self, mask, value): value where mask is true.
inline void masked_fill(NodeLowering& c) {
  const ElemType t = c.output_type();
  c.result(c.g.op.Where(c.cast(c.input(1), ElemType::Bool), c.operand(2, "value", t), c.cast(c.input(0), t)));
}
inline void clamp(NodeLowering& c) {
  const ElemType t = c.output_type();
  auto bound = [&](std::size_t k, std::string_view name) {
    return c.has_input(k) || c.has_attribute(name) ? Arg(c.operand(k, name, t)) : Arg();
  };
  Arg lo, hi;
  if (c.op() == "clamp_max") {
    hi = bound(1, "max");
  } else {
    lo = bound(1, "min");
    if (c.op() == "clamp") hi = bound(2, "max");
  }
  c.result(c.g.op.Clip(c.cast(c.input(0), t), lo, hi));
}
inline void hardtanh(NodeLowering& c) {
  const ElemType t = c.output_type();
  c.result(c.g.op.Clip(c.cast(c.input(0), t), c.constant(c.f("min_val", -1.0), t), c.constant(c.f("max_val", 1.0), t)));
}

// Activations. GELU is written out (ONNX's Gelu needs opset 20); the optimizer's rules fuse it back.
inline void gelu(NodeLowering& c) {
  const ElemType t = c.output_type();
  const std::string x = c.cast(c.input(0), t);
  std::string inner;
  if (c.s("approximate", "none") == "tanh") {
    const std::string cube = c.g.op.Mul(c.g.op.Pow(x, c.constant(3.0, t)), c.constant(0.044715, t));
    inner = c.g.op.Tanh(c.g.op.Mul(c.g.op.Add(x, cube), c.constant(std::sqrt(2.0 / std::numbers::pi), t)));
  } else {
    inner = c.g.op.Erf(c.g.op.Div(x, c.constant(std::numbers::sqrt2, t)));
  }
  c.result(c.g.op.Mul(c.g.op.Mul(x, c.constant(0.5, t)), c.g.op.Add(inner, c.constant(1.0, t))));
}
inline void silu(NodeLowering& c) {
  const std::string x = c.cast(c.input(0), c.output_type());
  c.result(c.g.op.Mul(x, c.g.op.Sigmoid(x)));
}
inline void leaky_relu(NodeLowering& c) {
  c.result(c.g.op.LeakyRelu(c.input(0), {{"alpha", c.f("negative_slope", 0.01)}}));
}
// elu(self, alpha, scale, input_scale): selu is elu with SELU's alpha and scale.
inline void elu(NodeLowering& c) {
  if (c.f("input_scale", 1.0) != 1.0) c.fail("elu with an input_scale is not supported yet");
  const double scale = c.f("scale", 1.0);
  if (scale == 1.0) return c.result(c.g.op.Elu(c.input(0), {{"alpha", c.f("alpha", 1.0)}}));
  c.result(c.g.op.Selu(c.input(0), {{"alpha", c.f("alpha", 1.0)}, {"gamma", scale}}));
}
// log_sigmoid_forward(self) -> (log(sigmoid(x)), buffer) = -softplus(-x); the buffer is for backward.
inline void log_sigmoid(NodeLowering& c) {
  if (c.output_read(1)) c.fail("output 1 (the backward buffer) is read: not supported");
  c.result(0, c.g.op.Neg(c.g.op.Softplus(c.g.op.Neg(c.input(0)))));
}
inline void prelu(NodeLowering& c) {
  // The slope is per channel (dimension 1): PRelu broadcasts it from the last dimension.
  std::string slope = c.input(1);
  const std::size_t rank = c.input_rank(0);
  if (c.input_rank(1) == 1 && rank > 2) {
    std::vector<int64_t> dims(rank - 1, 1);
    dims[0] = -1;
    slope = c.g.op.Reshape(slope, dims);
  }
  c.result(c.g.op.PRelu(c.input(0), slope));
}
// glu(self, dim): first half times the sigmoid of the second.
inline void glu(NodeLowering& c) {
  const int64_t dim = c.axis("dim", c.input_rank(0));
  const int64_t half = c.static_input_shape(0).at(static_cast<std::size_t>(dim)) / 2;
  Outputs halves = c.g.op.Split(c.input(0), std::vector<int64_t>{half, half}, {{"axis", dim}}, {.output_count = 2});
  c.result(c.g.op.Mul(halves[0], c.g.op.Sigmoid(halves[1])));
}
// addcmul(self, tensor1, tensor2, value) = self + value * tensor1 * tensor2.
inline void addcmul(NodeLowering& c) {
  const ElemType t = c.output_type();
  std::string product = c.g.op.Mul(c.cast(c.input(1), t), c.cast(c.input(2), t));
  if (const double value = c.f("value", 1.0); value != 1.0) product = c.g.op.Mul(product, c.constant(value, t));
  c.result(c.g.op.Add(c.cast(c.input(0), t), product));
}
inline void softplus(NodeLowering& c) {
  if (c.f("beta", 1.0) != 1.0) c.fail("softplus with beta != 1 is not supported yet");
  c.result(c.g.op.Softplus(c.input(0)));
}
inline void hardsigmoid(NodeLowering& c) {
  c.result(c.g.op.HardSigmoid(c.input(0), {{"alpha", 1.0 / 6.0}, {"beta", 0.5}}));
}
inline void hardswish(NodeLowering& c) { c.result(c.g.op.HardSwish(c.input(0))); }
inline void mish(NodeLowering& c) {
  const std::string x = c.input(0);
  c.result(c.g.op.Mul(x, c.g.op.Tanh(c.g.op.Softplus(x))));
}

}  // namespace detail

inline void add_elementwise_converters(ConverterTable& table) {
  using namespace detail;
  table.add("add", add);
  table.add("sub", sub);
  table.add("rsub", rsub);
  table.add("mul", binary<kMul>);
  table.add("div", div);
  table.add("pow", pow);
  table.add("maximum", binary<kMax>);
  table.add("minimum", binary<kMin>);
  table.add("logical_and", binary<kAnd>);
  table.add("bitwise_and", binary<kAnd>);
  table.add("logical_or", binary<kOr>);
  table.add("bitwise_or", binary<kOr>);
  table.add("logical_xor", binary<kXor>);
  table.add("eq", comparison<kEqual>);
  table.add("ne", comparison<kEqual, true>);
  table.add("lt", comparison<kLess>);
  table.add("le", comparison<kLessOrEqual>);
  table.add("gt", comparison<kGreater>);
  table.add("ge", comparison<kGreaterOrEqual>);
  table.add("neg", unary<kNeg>);
  table.add("abs", unary<kAbs>);
  table.add("exp", unary<kExp>);
  table.add("log", unary<kLog>);
  table.add("sqrt", unary<kSqrt>);
  table.add("rsqrt", rsqrt);
  table.add("sin", unary<kSin>);
  table.add("cos", unary<kCos>);
  table.add("tan", unary<kTan>);
  table.add("atan", unary<kAtan>);
  table.add("tanh", unary<kTanh>);
  table.add("sigmoid", unary<kSigmoid>);
  table.add("relu", unary<kRelu>);
  table.add("erf", unary<kErf>);
  table.add("floor", unary<kFloor>);
  table.add("ceil", unary<kCeil>);
  table.add("round", unary<kRound>);
  table.add("sign", unary<kSign>);
  table.add("reciprocal", unary<kReciprocal>);
  table.add("logical_not", unary<kNot>);
  table.add("bitwise_not", unary<kNot>);
  table.add("softsign", unary<kSoftsign>);
  table.add("where", where);
  table.add("masked_fill", masked_fill);
  table.add("clamp", clamp);
  table.add("clamp_min", clamp);
  table.add("clamp_max", clamp);
  table.add("hardtanh", hardtanh);
  table.add("gelu", gelu);
  table.add("silu", silu);
  table.add("leaky_relu", leaky_relu);
  table.add("elu", elu);
  table.add("softplus", softplus);
  table.add("hardsigmoid", hardsigmoid);
  table.add("hardswish", hardswish);
  table.add("mish", mish);
  table.add("log_sigmoid_forward", log_sigmoid);
  table.add("prelu", prelu);
  table.add("glu", glu);
  table.add("addcmul", addcmul);
}

}  // namespace xexp::aten
