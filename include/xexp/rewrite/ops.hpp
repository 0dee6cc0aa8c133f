#pragma once
// Node makers for every default-domain ONNX op (ONNX 1.12's registry and the ops of opsets 18 to 24),
// so that a rule reads like the model: Transpose(x, ...) instead of op<"Transpose">(x, ...). An op
// family or another domain: op<"Add|Sub">, op<"Name", "domain">; com.microsoft's FusedMatMul has its
// maker here too.
#include "xexp/rewrite/pattern.hpp"

namespace xexp::rewrite::ops {

// clang-format off
#define XEXP_REWRITE_ONNX_OPS(X) \
  X(Abs) X(Acos) X(Acosh) X(Add) X(AffineGrid) X(And) X(ArgMax) X(ArgMin) X(Asin) X(Asinh) X(Atan) X(Atanh)      \
  X(Attention) X(AveragePool) X(BatchNormalization) X(Bernoulli) X(BitShift) X(BitwiseAnd) X(BitwiseNot)         \
  X(BitwiseOr) X(BitwiseXor) X(BlackmanWindow) X(Cast) X(CastLike) X(Ceil) X(Celu) X(CenterCropPad) X(Clip)      \
  X(Col2Im) X(Compress) X(Concat) X(ConcatFromSequence) X(Constant) X(ConstantOfShape) X(Conv) X(ConvInteger)    \
  X(ConvTranspose) X(Cos) X(Cosh) X(CumSum) X(DFT) X(DeformConv) X(DepthToSpace) X(DequantizeLinear) X(Det)      \
  X(Div) X(Dropout) X(DynamicQuantizeLinear) X(Einsum) X(Elu) X(Equal) X(Erf) X(Exp) X(Expand) X(EyeLike)        \
  X(Flatten) X(Floor) X(GRU) X(Gather) X(GatherElements) X(GatherND) X(Gelu) X(Gemm) X(GlobalAveragePool)        \
  X(GlobalLpPool) X(GlobalMaxPool) X(Greater) X(GreaterOrEqual) X(GridSample) X(GroupNormalization)              \
  X(HammingWindow) X(HannWindow) X(HardSigmoid) X(HardSwish) X(Hardmax) X(Identity) X(If) X(ImageDecoder)        \
  X(InstanceNormalization) X(IsInf) X(IsNaN) X(LRN) X(LSTM) X(LayerNormalization) X(LeakyRelu) X(Less)           \
  X(LessOrEqual) X(Log) X(LogSoftmax) X(Loop) X(LpNormalization) X(LpPool) X(MatMul) X(MatMulInteger) X(Max)     \
  X(MaxPool) X(MaxRoiPool) X(MaxUnpool) X(Mean) X(MeanVarianceNormalization) X(MelWeightMatrix) X(Min)           \
  X(Mish) X(Mod) X(Mul) X(Multinomial) X(Neg) X(NegativeLogLikelihoodLoss) X(NonMaxSuppression) X(NonZero)       \
  X(Not) X(OneHot) X(Optional) X(OptionalGetElement) X(OptionalHasElement) X(Or) X(PRelu) X(Pad) X(Pow)          \
  X(QLinearConv) X(QLinearMatMul) X(QuantizeLinear) X(RMSNormalization) X(RNN) X(RandomNormal)                   \
  X(RandomNormalLike) X(RandomUniform) X(RandomUniformLike) X(Range) X(Reciprocal) X(ReduceL1) X(ReduceL2)       \
  X(ReduceLogSum) X(ReduceLogSumExp) X(ReduceMax) X(ReduceMean) X(ReduceMin) X(ReduceProd) X(ReduceSum)          \
  X(ReduceSumSquare) X(RegexFullMatch) X(Relu) X(Reshape) X(Resize) X(ReverseSequence) X(RoiAlign)               \
  X(RotaryEmbedding) X(Round) X(STFT) X(Scan) X(Scatter) X(ScatterElements) X(ScatterND) X(Selu)                 \
  X(SequenceAt) X(SequenceConstruct) X(SequenceEmpty) X(SequenceErase) X(SequenceInsert) X(SequenceLength)       \
  X(SequenceMap) X(Shape) X(Shrink) X(Sigmoid) X(Sign) X(Sin) X(Sinh) X(Size) X(Slice) X(Softmax)                \
  X(SoftmaxCrossEntropyLoss) X(Softplus) X(Softsign) X(SpaceToDepth) X(Split) X(SplitToSequence) X(Sqrt)         \
  X(Squeeze) X(StringConcat) X(StringNormalizer) X(StringSplit) X(Sub) X(Sum) X(Swish) X(Tan) X(Tanh)            \
  X(TensorScatter) X(TfIdfVectorizer) X(ThresholdedRelu) X(Tile) X(TopK) X(Transpose) X(Trilu) X(Unique)         \
  X(Unsqueeze) X(Upsample) X(Where) X(Xor)

// clang-format on
#define XEXP_REWRITE_OP(NAME) inline constexpr OpMaker<#NAME> NAME{};
XEXP_REWRITE_ONNX_OPS(XEXP_REWRITE_OP)
#undef XEXP_REWRITE_OP
#undef XEXP_REWRITE_ONNX_OPS
inline constexpr OpMaker<"FusedMatMul", "com.microsoft"> FusedMatMul{};

}  // namespace xexp::rewrite::ops
