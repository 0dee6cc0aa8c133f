#pragma once
// The onnxruntime set: fusions into com.microsoft contrib operators, in experimental-experiment's list
// order, each computing the same function and no slower on ONNX Runtime's CPU provider than what it
// replaces (so that `xexp optimize`'s default never slows a model down). The opt-in sets beside it hold
// the rest: onnxruntime_gpu (slower on CPU), onnxruntime_approx (another function), onnxruntime_training
// (kernels the CPU package lacks). In compiled mode (core/config.hpp) only src/rules_onnxruntime.cpp instantiates them, in a
// translation unit of its own so that the two sets compile side by side.
#include "xexp/core/config.hpp"
#include "xexp/rewrite/rule_set.hpp"
#if !defined(XEXP_COMPILED_LIB) || defined(XEXP_BUILD_ONNXRUNTIME_RULES)
#include "xexp/patterns/ort/batch_normalization_training.hpp"
#include "xexp/patterns/ort/bias_gelu.hpp"
#include "xexp/patterns/ort/bias_softmax.hpp"
#include "xexp/patterns/ort/fast_gelu.hpp"
#include "xexp/patterns/ort/fused_conv.hpp"
#include "xexp/patterns/ort/fused_conv_add.hpp"
#include "xexp/patterns/ort/fused_gemm.hpp"
#include "xexp/patterns/ort/fused_matmul.hpp"
#include "xexp/patterns/ort/fused_matmul_div.hpp"
#include "xexp/patterns/ort/fused_matmul_transpose.hpp"
#include "xexp/patterns/ort/fused_matmul_x2.hpp"
#include "xexp/patterns/ort/gelu_erf.hpp"
#include "xexp/patterns/ort/gelu_ort.hpp"
#include "xexp/patterns/ort/layer_normalization_any_opset.hpp"
#include "xexp/patterns/ort/missing_cos_sin.hpp"
#include "xexp/patterns/ort/missing_range.hpp"
#include "xexp/patterns/ort/missing_reduce_max.hpp"
#include "xexp/patterns/ort/missing_top_k.hpp"
#include "xexp/patterns/ort/multi_head_attention.hpp"
#include "xexp/patterns/ort/multi_head_attention_bias.hpp"
#include "xexp/patterns/ort/multi_head_attention_packed_qkv.hpp"
#include "xexp/patterns/ort/multi_head_attention_scaled_query.hpp"
#include "xexp/patterns/ort/quick_gelu.hpp"
#include "xexp/patterns/ort/reshape_gemm.hpp"
#include "xexp/patterns/ort/reshape_gemm_reshape.hpp"
#include "xexp/patterns/ort/rotary_embedding.hpp"
#include "xexp/patterns/ort/simplified_layer_normalization.hpp"
#include "xexp/patterns/ort/simplified_layer_normalization_mul.hpp"
#include "xexp/patterns/ort/skip_layer_normalization.hpp"
#include "xexp/patterns/ort/skip_layer_normalization_bias.hpp"
#include "xexp/patterns/ort/skip_simplified_layer_normalization.hpp"
#include "xexp/patterns/ort/skip_simplified_layer_normalization_mul.hpp"
#include "xexp/patterns/ort/softmax_grad.hpp"
#include "xexp/patterns/ort/transpose_fused_matmul_b.hpp"
#endif

namespace xexp::patterns {

XEXP_INLINE rewrite::RuleSet onnxruntime_rules();
XEXP_INLINE rewrite::RuleSet onnxruntime_gpu_rules();
XEXP_INLINE rewrite::RuleSet onnxruntime_approx_rules();
XEXP_INLINE rewrite::RuleSet onnxruntime_training_rules();

#if !defined(XEXP_COMPILED_LIB) || defined(XEXP_BUILD_ONNXRUNTIME_RULES)
XEXP_INLINE rewrite::RuleSet onnxruntime_rules() {
  return {
      bias_gelu_rule(),
      contrib_rotary_embedding_rule(),
      contrib_rotary_embedding_3d_rule(),
      contrib_rotary_embedding_partial_rule(),
      gelu_ort_rule(),
      gelu_erf_rule(),
      fast_gelu_rule(),
      fused_conv_rule(),
      fused_conv_add_rule(),
      fused_gemm_rule(),
      fused_matmul_rule(),
      fused_matmul_x2_rule(),
      fused_matmul_div_rule(),
      fused_matmul_transpose_rule(),
      layer_normalization_any_opset_rule(),
      missing_cos_sin_rule(),
      missing_range_rule(),
      missing_reduce_max_rule(),
      missing_top_k_rule(),
      multi_head_attention_rule(),
      multi_head_attention_key_value_3d_rule(),
      multi_head_attention_scaled_query_rule(),
      multi_head_attention_packed_qkv_rule(),
      multi_head_attention_bias_rule(),
      quick_gelu_rule(),
      reshape_gemm_reshape_rule(),  // before ReshapeGemm: where both apply, three nodes become one
      reshape_gemm_rule(),
      simplified_layer_normalization_rule(),
      simplified_layer_normalization_mul_rule(),
      transpose_fused_matmul_b_rule(),
  };
}

// The onnxruntime_gpu set: fusions whose kernels ONNX Runtime 1.30's CPU provider runs slower than the
// nodes they replace (timings in bench/README.md), kept for the GPU providers, which fuse them
// themselves: Skip(Simplified)LayerNormalization, whose CPU kernel loops over each row with a division
// per element, MultiHeadAttention of a single head, which gains nothing there, and MultiHeadAttention
// under a key padding mask, which loses a little.
XEXP_INLINE rewrite::RuleSet onnxruntime_gpu_rules() {
  return {
      multi_head_attention_key_padding_rule(),
      multi_head_attention_one_head_rule(),
      skip_layer_normalization_rule(),
      skip_layer_normalization_bias_rule(),
      skip_simplified_layer_normalization_rule(),
      skip_simplified_layer_normalization_mul_rule(),
  };
}

// The onnxruntime_approx set: fusions into a kernel that computes another function, close to the
// matched one (an erf Gelu as FastGelu's tanh formula). Faster, not the same numbers: only a user who
// names the set gets them.
XEXP_INLINE rewrite::RuleSet onnxruntime_approx_rules() { return {fast_gelu_approx_rule()}; }

// The onnxruntime_training set: fusions into kernels of ONNX Runtime's training and GPU builds that its
// CPU inference package lacks, for the backward graphs torch's ONNX Runtime backends run, and the
// training-mode BatchNormalization the CUDA provider cannot run, written out. Not in `xexp optimize`'s
// default rules, whose models every ONNX Runtime build runs.
XEXP_INLINE rewrite::RuleSet onnxruntime_training_rules() {
  return {
      ort_batch_normalization_training_rule(),
      bias_softmax_rule(),
      softmax_grad_rule(),
  };
}
#endif

}  // namespace xexp::patterns
