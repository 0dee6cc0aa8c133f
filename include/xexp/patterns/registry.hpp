#pragma once
// The rule sets, in the original's list order (the order decides which of two overlapping matches
// wins). Including this header registers "default" and "onnxruntime" in rewrite::Catalog::global(),
// so that rewrite::rules_from_string("default+onnxruntime") finds them.
#include "xexp/patterns/onnx/cast.hpp"
#include "xexp/patterns/onnx/cast_cast.hpp"
#include "xexp/patterns/onnx/gemm_transpose.hpp"
#include "xexp/patterns/onnx/identity.hpp"
#include "xexp/patterns/onnx/layer_normalization.hpp"
#include "xexp/patterns/onnx/layer_normalization_scale.hpp"
#include "xexp/patterns/onnx/matmul_add.hpp"
#include "xexp/patterns/onnx/reshape.hpp"
#include "xexp/patterns/onnx/reshape_reshape.hpp"
#include "xexp/patterns/onnx/slice_slice.hpp"
#include "xexp/patterns/onnx/squeeze_unsqueeze.hpp"
#include "xexp/patterns/onnx/transpose_matmul.hpp"
#include "xexp/patterns/onnx/transpose_transpose.hpp"
#include "xexp/patterns/onnx/unsqueeze_unsqueeze.hpp"
#include "xexp/patterns/ort/fused_matmul.hpp"
#include "xexp/rewrite/rule_set.hpp"

namespace xexp::patterns {

// The default set: standard ONNX operators only.
inline rewrite::RuleSet default_rules() {
  return {
      cast_rule(),
      cast_cast_rule(),
      expand_rule(),
      identity_rule(),
      layer_normalization_rule(),
      layer_normalization_scale_rule(),
      reshape_rule(),
      matmul_add_rule(),
      gemm_transpose_rule(),
      reshape_reshape_rule(),
      slice_slice_rule(),
      squeeze_unsqueeze_rule(),
      transpose_matmul_rule(),
      transpose_transpose_rule(),
      unsqueeze_unsqueeze_rule(),
  };
}

// The onnxruntime set: fusions into com.microsoft contrib operators.
inline rewrite::RuleSet onnxruntime_rules() { return {fused_matmul_rule()}; }

namespace detail {
inline const bool registered = [] {
  rewrite::Catalog::global().add_set("default", default_rules());
  rewrite::Catalog::global().add_set("onnxruntime", onnxruntime_rules());
  return true;
}();
}  // namespace detail

}  // namespace xexp::patterns
