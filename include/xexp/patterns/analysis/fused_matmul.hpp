#pragma once
// What a com.microsoft FusedMatMul computes, alpha * op(A) @ op(B): read by the onnxruntime set's rules
// that build it and by the default set's, which meet it when the onnxruntime set fused a MatMul first.
#include "xexp/patterns/facts.hpp"

namespace xexp::patterns::analysis {

// The FusedMatMul's alpha (1 when absent).
inline double alpha_of(const ValueView& fused) {
  const ir::Attribute* a = rewrite::node_of(fused).attribute(Symbol("alpha"));
  return a ? a->f : 1.0;
}
// The product's alpha (1 on a MatMul) times, or divided by, the scalar s, as the alpha of the FusedMatMul
// that takes s in (FusedMatMul, FusedMatMulDiv).
inline constexpr auto alpha_times =
    rewrite::fact<"alpha_times">([](const ValueView& product, const Tensor& s) {
      return static_cast<float>(alpha_of(product) * eval::scalar_double(s));
    });
inline constexpr auto alpha_divided_by =
    rewrite::fact<"alpha_divided_by">([](const ValueView& product, const Tensor& s) {
      return static_cast<float>(alpha_of(product) / eval::scalar_double(s));
    });
// FusedMatMul leaves the batch axes in place (transBatchA and transBatchB absent or 0).
inline bool keeps_batch_axes(const ir::Node& fused) {
  return int_attribute(fused, "transBatchA", 0) == 0 && int_attribute(fused, "transBatchB", 0) == 0;
}

}  // namespace xexp::patterns::analysis
