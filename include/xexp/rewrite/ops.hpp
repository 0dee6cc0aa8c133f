#pragma once
// Node makers for the ops rules mention most, so that a rule reads like the model: Transpose(x, ...)
// instead of op<"Transpose">(x, ...). Any other op: op<"Name"> or op<"Name", "domain">.
#include "xexp/rewrite/pattern.hpp"

namespace xexp::rewrite::ops {

#define XEXP_REWRITE_OP(NAME) inline constexpr OpMaker<#NAME> NAME{};
XEXP_REWRITE_OP(Add)
XEXP_REWRITE_OP(Cast)
XEXP_REWRITE_OP(Concat)
XEXP_REWRITE_OP(Div)
XEXP_REWRITE_OP(Expand)
XEXP_REWRITE_OP(Gemm)
XEXP_REWRITE_OP(Identity)
XEXP_REWRITE_OP(LayerNormalization)
XEXP_REWRITE_OP(MatMul)
XEXP_REWRITE_OP(Mul)
XEXP_REWRITE_OP(Pow)
XEXP_REWRITE_OP(ReduceMean)
XEXP_REWRITE_OP(ReduceSum)
XEXP_REWRITE_OP(Reshape)
XEXP_REWRITE_OP(Shape)
XEXP_REWRITE_OP(Slice)
XEXP_REWRITE_OP(Sqrt)
XEXP_REWRITE_OP(Squeeze)
XEXP_REWRITE_OP(Sub)
XEXP_REWRITE_OP(Transpose)
XEXP_REWRITE_OP(Unsqueeze)
#undef XEXP_REWRITE_OP
inline constexpr OpMaker<"FusedMatMul", "com.microsoft"> FusedMatMul{};

}  // namespace xexp::rewrite::ops
