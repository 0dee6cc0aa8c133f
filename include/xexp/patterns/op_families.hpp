#pragma once
// Op families the rules match as one node pattern: op<kBinaryArithmetic>(a, b) matches any of them, and
// rebuild(n, ...) makes the op that matched again.
#include "xexp/rewrite/fixed_string.hpp"

namespace xexp::patterns {

inline constexpr rewrite::FixedString kBinaryArithmetic = "Add|Sub|Mul|Div";

// Ops computing each element from the same element of their first input (attributes and scalar extra
// inputs such as Clip's bounds aside): they commute with any Transpose, Reshape or Expand. Not here:
// Softmax, LogSoftmax, Hardmax, CumSum (they read an axis), PRelu (its slope broadcasts).
inline constexpr rewrite::FixedString kElementwiseUnary =
    "Abs|Acos|Acosh|Asin|Asinh|Atan|Atanh|Cast|Ceil|Celu|Clip|Cos|Cosh|Elu|Erf|Exp|Floor|Gelu|HardSigmoid|"
    "HardSwish|IsInf|IsNaN|LeakyRelu|Log|Mish|Neg|Not|Reciprocal|Relu|Round|Selu|Sigmoid|Sign|Sin|Sinh|"
    "Softplus|Softsign|Sqrt|Tan|Tanh|ThresholdedRelu";

// Binary ops whose inputs broadcast (multidirectional broadcasting in the ONNX specification).
inline constexpr rewrite::FixedString kBroadcastBinary =
    "Add|Sub|Mul|Div|Pow|Mod|And|Or|Xor|Equal|Greater|GreaterOrEqual|Less|LessOrEqual";

}  // namespace xexp::patterns
