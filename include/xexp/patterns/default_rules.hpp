#pragma once
// The default set: standard ONNX operators only, in experimental-experiment's list order (the order
// decides which of two overlapping matches wins). In compiled mode (core/config.hpp) only
// src/rules_default.cpp instantiates them.
#include "xexp/core/config.hpp"
#include "xexp/rewrite/rule_set.hpp"
#if !defined(XEXP_COMPILED_LIB) || defined(XEXP_BUILD_DEFAULT_RULES)
#include "xexp/patterns/onnx/activation.hpp"
#include "xexp/patterns/onnx/attention.hpp"
#include "xexp/patterns/onnx/attention_packed_qkv.hpp"
#include "xexp/patterns/onnx/attention_scaled_query.hpp"
#include "xexp/patterns/onnx/batch_normalization.hpp"
#include "xexp/patterns/onnx/batch_normalization_training.hpp"
#include "xexp/patterns/onnx/cast.hpp"
#include "xexp/patterns/onnx/cast_cast.hpp"
#include "xexp/patterns/onnx/cast_cast_binary.hpp"
#include "xexp/patterns/onnx/cast_layer_normalization_cast.hpp"
#include "xexp/patterns/onnx/cast_like.hpp"
#include "xexp/patterns/onnx/cast_op_cast.hpp"
#include "xexp/patterns/onnx/clip_clip.hpp"
#include "xexp/patterns/onnx/concat_empty.hpp"
#include "xexp/patterns/onnx/concat_gather.hpp"
#include "xexp/patterns/onnx/concat_reshape.hpp"
#include "xexp/patterns/onnx/concat_twice_unary.hpp"
#include "xexp/patterns/onnx/conv_add_mul.hpp"
#include "xexp/patterns/onnx/conv_batch_normalization.hpp"
#include "xexp/patterns/onnx/conv_bias_null.hpp"
#include "xexp/patterns/onnx/dropout.hpp"
#include "xexp/patterns/onnx/expand_broadcast.hpp"
#include "xexp/patterns/onnx/expand_swap.hpp"
#include "xexp/patterns/onnx/gathers_split.hpp"
#include "xexp/patterns/onnx/gelu.hpp"
#include "xexp/patterns/onnx/gemm_add.hpp"
#include "xexp/patterns/onnx/gemm_batch_normalization.hpp"
#include "xexp/patterns/onnx/gemm_transpose.hpp"
#include "xexp/patterns/onnx/hard_swish.hpp"
#include "xexp/patterns/onnx/identity.hpp"
#include "xexp/patterns/onnx/layer_normalization.hpp"
#include "xexp/patterns/onnx/layer_normalization_scale.hpp"
#include "xexp/patterns/onnx/leaky_relu.hpp"
#include "xexp/patterns/onnx/masked_fill_to_bool.hpp"
#include "xexp/patterns/onnx/matmul_add.hpp"
#include "xexp/patterns/onnx/matmul_batch_normalization.hpp"
#include "xexp/patterns/onnx/matmul_reshape2_of3.hpp"
#include "xexp/patterns/onnx/matmul_shared_input.hpp"
#include "xexp/patterns/onnx/mul_add_conv.hpp"
#include "xexp/patterns/onnx/mul_mul_matmul.hpp"
#include "xexp/patterns/onnx/mul_mul_mul_scalar.hpp"
#include "xexp/patterns/onnx/not_not.hpp"
#include "xexp/patterns/onnx/not_where.hpp"
#include "xexp/patterns/onnx/reduce_arg_top_k.hpp"
#include "xexp/patterns/onnx/reduce_reshape.hpp"
#include "xexp/patterns/onnx/reduce_sum_normalize.hpp"
#include "xexp/patterns/onnx/reduce_sum_to_mean.hpp"
#include "xexp/patterns/onnx/reshape.hpp"
#include "xexp/patterns/onnx/reshape2_of3.hpp"
#include "xexp/patterns/onnx/reshape_matmul_reshape.hpp"
#include "xexp/patterns/onnx/reshape_reshape.hpp"
#include "xexp/patterns/onnx/reshape_reshape_binary.hpp"
#include "xexp/patterns/onnx/rms_normalization.hpp"
#include "xexp/patterns/onnx/rms_normalization_mul.hpp"
#include "xexp/patterns/onnx/rotary_concat_part.hpp"
#include "xexp/patterns/onnx/rotary_embedding.hpp"
#include "xexp/patterns/onnx/rotary_embedding_3d.hpp"
#include "xexp/patterns/onnx/rotary_embedding_partial.hpp"
#include "xexp/patterns/onnx/scaled_where.hpp"
#include "xexp/patterns/onnx/sequence_construct_at.hpp"
#include "xexp/patterns/onnx/sequence_construct_concat.hpp"
#include "xexp/patterns/onnx/shape_based_concat_expand.hpp"
#include "xexp/patterns/onnx/shape_based_constant_shape_value.hpp"
#include "xexp/patterns/onnx/shape_based_expand_broadcast.hpp"
#include "xexp/patterns/onnx/shape_based_expand_broadcast_matmul.hpp"
#include "xexp/patterns/onnx/shape_based_expand_cast_where_swap.hpp"
#include "xexp/patterns/onnx/shape_based_expand_swap.hpp"
#include "xexp/patterns/onnx/shape_based_identity.hpp"
#include "xexp/patterns/onnx/shape_based_matmul_to_mul.hpp"
#include "xexp/patterns/onnx/shape_based_reshape_is_squeeze.hpp"
#include "xexp/patterns/onnx/shape_based_same_shape_value.hpp"
#include "xexp/patterns/onnx/shape_based_static_expand.hpp"
#include "xexp/patterns/onnx/shape_based_static_reshape.hpp"
#include "xexp/patterns/onnx/shaped_based_reshape.hpp"
#include "xexp/patterns/onnx/slice_slice.hpp"
#include "xexp/patterns/onnx/slices_split.hpp"
#include "xexp/patterns/onnx/softmax_cross_entropy_loss_cast.hpp"
#include "xexp/patterns/onnx/split_concat.hpp"
#include "xexp/patterns/onnx/squeeze_add.hpp"
#include "xexp/patterns/onnx/squeeze_binary_unsqueeze.hpp"
#include "xexp/patterns/onnx/squeeze_unsqueeze.hpp"
#include "xexp/patterns/onnx/static_concat_reshape.hpp"
#include "xexp/patterns/onnx/sub1_mul.hpp"
#include "xexp/patterns/onnx/swap_expand_reshape.hpp"
#include "xexp/patterns/onnx/swap_range_add_scalar.hpp"
#include "xexp/patterns/onnx/swap_unary.hpp"
#include "xexp/patterns/onnx/swap_unsqueeze_transpose.hpp"
#include "xexp/patterns/onnx/switch_order_binary.hpp"
#include "xexp/patterns/onnx/switch_reshape_activation.hpp"
#include "xexp/patterns/onnx/transpose_equal_reshape.hpp"
#include "xexp/patterns/onnx/transpose_gather.hpp"
#include "xexp/patterns/onnx/transpose_matmul.hpp"
#include "xexp/patterns/onnx/transpose_reshape_matmul.hpp"
#include "xexp/patterns/onnx/transpose_reshape_transpose.hpp"
#include "xexp/patterns/onnx/transpose_transpose.hpp"
#include "xexp/patterns/onnx/unsqueeze_equal.hpp"
#include "xexp/patterns/onnx/unsqueeze_or_squeeze_reshape.hpp"
#include "xexp/patterns/onnx/unsqueeze_reshape.hpp"
#include "xexp/patterns/onnx/unsqueeze_unsqueeze.hpp"
#include "xexp/patterns/onnx/where_add.hpp"
#endif

namespace xexp::patterns {

XEXP_INLINE rewrite::RuleSet default_rules();

#if !defined(XEXP_COMPILED_LIB) || defined(XEXP_BUILD_DEFAULT_RULES)
XEXP_INLINE rewrite::RuleSet default_rules() {
  return {
      activation_rule(),
      attention_rule(),
      attention_one_head_rule(),
      attention_scaled_query_rule(),
      attention_packed_qkv_rule(),
      batch_normalization_rule(),
      batch_normalization_training_rule(),
      cast_layer_normalization_cast_rule(),
      cast_rule(),
      cast_cast_binary_rule(),
      cast_cast_rule(),
      cast_like_rule(),
      cast_op_cast_rule(),
      clip_clip_rule(),
      concat_empty_rule(),
      concat_gather_rule(),
      concat_reshape_rule(),
      concat_twice_unary_rule(),
      conv_bias_null_rule(),
      conv_batch_normalization_rule(),
      conv_add_mul_rule(),
      mul_add_conv_rule(),
      dropout_rule(),
      expand_rule(),
      expand_broadcast_rule(),
      expand_swap_rule(),
      gathers_split_rule(),
      gelu_rule(),
      hard_swish_rule(),
      identity_rule(),
      layer_normalization_rule(),
      layer_normalization_scale_rule(),
      leaky_relu_rule(),
      masked_fill_to_bool_rule(),
      mul_mul_mul_scalar_rule(),
      not_not_rule(),
      not_where_rule(),
      reduce_arg_top_k_rule(),
      reduce_reshape_rule(),
      reduce_sum_normalize_rule(),
      reduce_sum_to_mean_rule(),
      rms_normalization_rule(),
      rms_normalization_mul_rule(),
      rotary_embedding_rule(),
      rotary_embedding_3d_rule(),
      rotary_embedding_partial_rule(),
      reshape_rule(),
      reshape_matmul_reshape_rule(),
      reshape2_of3_rule(),
      reshape_reshape_binary_rule(),
      matmul_add_rule(),
      gemm_add_rule(),
      gemm_batch_normalization_rule(),
      matmul_batch_normalization_rule(),
      gemm_transpose_rule(),
      matmul_reshape2_of3_rule(),
      mul_mul_matmul_rule(),
      matmul_shared_input_rule(),
      shape_based_reshape_is_squeeze_rule(),
      shape_based_static_expand_rule(),
      shape_based_concat_expand_rule(),
      shape_based_constant_shape_value_rule(),
      shape_based_same_shape_value_rule(),
      shape_based_identity_rule(),
      shape_based_expand_broadcast_rule(),
      shape_based_expand_broadcast_matmul_rule(),
      shape_based_expand_cast_where_swap_rule(),
      shape_based_expand_swap_rule(),
      shape_based_matmul_to_mul_rule(),
      shaped_based_reshape_rule(),
      reshape_reshape_rule(),
      scaled_where_rule(),
      sequence_construct_at_rule(),
      sequence_construct_concat_rule(),
      slice_slice_rule(),
      slices_split_rule(),
      softmax_cross_entropy_loss_cast_rule(),
      split_concat_rule(),
      squeeze_add_rule(),
      squeeze_binary_unsqueeze_rule(),
      squeeze_unsqueeze_rule(),
      static_concat_reshape_rule(),
      shape_based_static_reshape_rule(),  // after the Concat rules: where they apply, they do it first
      sub1_mul_rule(),
      swap_expand_reshape_rule(),
      swap_range_add_scalar_rule(),
      swap_unary_rule(),
      swap_unsqueeze_transpose_rule(),
      switch_order_binary_rule(),
      switch_reshape_activation_rule(),
      transpose_equal_reshape_rule(),
      transpose_gather_rule(),
      transpose_matmul_rule(),
      transpose_reshape_matmul_rule(),
      transpose_reshape_transpose_rule(),
      transpose_transpose_rule(),
      unsqueeze_equal_rule(),
      unsqueeze_or_squeeze_reshape_rule(),
      unsqueeze_reshape_rule(),
      unsqueeze_unsqueeze_rule(),
      where_add_rule(),
      rotary_concat_part_rule(),
  };
}
#endif

}  // namespace xexp::patterns
