#pragma once
// g.op.MatMul(x, w), g.op.Reshape(x, {0, -1}), g.op.Softmax(x, {{"axis", -1}}), g.op.ms.FusedMatMul(a, b):
// one member per op, all forwarding to GraphBuilder::make_op through one mechanism. Arguments are
// value names, Tensors (made initializers) or int64 vectors (made 1-D initializers; for attributes that
// became inputs, such as axes, they are emitted as an attribute or an input by opset), then optional
// attributes, then OpOptions (output names, node name, domain). More than six inputs: pass a vector.
#include <string_view>
#include <utility>
#include <vector>

#include "xexp/builder/op_args.hpp"

namespace xexp {

class GraphBuilder;

class OpsBase {
 public:
  explicit OpsBase(GraphBuilder* builder, std::string_view domain) : builder_(builder), domain_(domain) {}
  // Any op by name, for ops without a member.
  Outputs call(std::string_view op_type, std::vector<Arg> args, const Attrs& attrs = {}, const OpOptions& options = {});

 protected:
  GraphBuilder* builder_;
  std::string_view domain_;
};

// Overloads for 0 to 6 inputs and for a vector of inputs, so that a trailing braced attribute list
// ({{"axis", 1}}) lands in `attrs` whatever the op's arity.
#define XEXP_OP_SHORTCUT(NAME)                                                                                  \
  Outputs NAME(const Attrs& attrs = {}, const OpOptions& o = {}) { return call(#NAME, {}, attrs, o); }         \
  Outputs NAME(Arg a, const Attrs& attrs = {}, const OpOptions& o = {}) {                                       \
    return call(#NAME, {std::move(a)}, attrs, o);                                                               \
  }                                                                                                             \
  Outputs NAME(Arg a, Arg b, const Attrs& attrs = {}, const OpOptions& o = {}) {                                \
    return call(#NAME, {std::move(a), std::move(b)}, attrs, o);                                                 \
  }                                                                                                             \
  Outputs NAME(Arg a, Arg b, Arg c, const Attrs& attrs = {}, const OpOptions& o = {}) {                         \
    return call(#NAME, {std::move(a), std::move(b), std::move(c)}, attrs, o);                                   \
  }                                                                                                             \
  Outputs NAME(Arg a, Arg b, Arg c, Arg d, const Attrs& attrs = {}, const OpOptions& o = {}) {                  \
    return call(#NAME, {std::move(a), std::move(b), std::move(c), std::move(d)}, attrs, o);                     \
  }                                                                                                             \
  Outputs NAME(Arg a, Arg b, Arg c, Arg d, Arg e, const Attrs& attrs = {}, const OpOptions& o = {}) {           \
    return call(#NAME, {std::move(a), std::move(b), std::move(c), std::move(d), std::move(e)}, attrs, o);       \
  }                                                                                                             \
  Outputs NAME(Arg a, Arg b, Arg c, Arg d, Arg e, Arg f, const Attrs& attrs = {}, const OpOptions& o = {}) {    \
    return call(#NAME, {std::move(a), std::move(b), std::move(c), std::move(d), std::move(e), std::move(f)},    \
                attrs, o);                                                                                      \
  }                                                                                                             \
  Outputs NAME(std::vector<Arg> args, const Attrs& attrs = {}, const OpOptions& o = {}) {                       \
    return call(#NAME, std::move(args), attrs, o);                                                              \
  }

// The default-domain ops the inference knows (see infer/), plus a few common others.
#define XEXP_ONNX_OPS(X)                                                                                        \
  X(Abs) X(Acos) X(Acosh) X(Add) X(And) X(ArgMax) X(ArgMin) X(Asin) X(Asinh) X(Atan) X(Atanh)                   \
  X(BatchNormalization) X(BitShift) X(BitwiseAnd) X(BitwiseNot) X(BitwiseOr) X(BitwiseXor) X(Cast) X(CastLike)  \
  X(Ceil) X(Celu) X(Clip) X(Concat) X(Constant) X(ConstantOfShape) X(Cos) X(Cosh) X(CumSum) X(Div) X(Dropout)   \
  X(Elu) X(Equal) X(Erf) X(Exp) X(Expand) X(Flatten) X(Floor) X(Gather) X(GatherElements) X(Gelu) X(Gemm)       \
  X(Greater) X(GreaterOrEqual) X(GroupNormalization) X(HardSigmoid) X(HardSwish) X(Hardmax) X(Identity)         \
  X(InstanceNormalization) X(IsInf) X(IsNaN) X(LayerNormalization) X(LeakyRelu) X(Less) X(LessOrEqual) X(Log)   \
  X(LogSoftmax) X(LpNormalization) X(MatMul) X(Max) X(Mean) X(MeanVarianceNormalization) X(Min) X(Mish) X(Mod)  \
  X(Mul) X(Neg) X(Not) X(Or) X(PRelu) X(Pad) X(Pow) X(RMSNormalization) X(Range) X(Reciprocal) X(ReduceL1)       \
  X(ReduceL2) X(ReduceLogSum) X(ReduceLogSumExp) X(ReduceMax) X(ReduceMean) X(ReduceMin) X(ReduceProd)          \
  X(ReduceSum) X(ReduceSumSquare) X(Relu) X(Reshape) X(Round) X(ScatterElements) X(ScatterND) X(Selu)           \
  X(Shape) X(Shrink) X(Sigmoid) X(Sign) X(Sin) X(Sinh) X(Size) X(Slice) X(Softmax) X(Softplus) X(Softsign)      \
  X(Split) X(Sqrt) X(Squeeze) X(Sub) X(Sum) X(Tan) X(Tanh) X(ThresholdedRelu) X(Tile) X(Transpose) X(Trilu)     \
  X(Unsqueeze) X(Where) X(Xor)

#define XEXP_MS_OPS(X)                                                                                          \
  X(BiasGelu) X(FastGelu) X(FusedMatMul) X(Gelu) X(QuickGelu) X(SimplifiedLayerNormalization)                  \
  X(SkipLayerNormalization) X(SkipSimplifiedLayerNormalization)

class MsOps : public OpsBase {
 public:
  explicit MsOps(GraphBuilder* builder) : OpsBase(builder, "com.microsoft") {}
  XEXP_MS_OPS(XEXP_OP_SHORTCUT)
};

class Ops : public OpsBase {
 public:
  explicit Ops(GraphBuilder* builder) : OpsBase(builder, ""), ms(builder) {}
  XEXP_ONNX_OPS(XEXP_OP_SHORTCUT)
  MsOps ms;  // com.microsoft ops: g.op.ms.FusedMatMul(a, b)
};

}  // namespace xexp
