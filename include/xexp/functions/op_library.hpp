#pragma once
// Functions an exporter writes for single operators of its own op library, not for the model's
// modules: onnxscript's torch_lib (domains pkg.onnxscript.torch_lib and pkg.onnxscript.torch_lib.common),
// which torch's dynamo exporter can leave in the file, one ATen op each (aten_view is Cast + Reshape,
// aten_t an If on the rank, aten_softmax_no_dtype an If on IsScalar), and experimental-experiment's
// domain `aten` (its aten_as_function option), one ATen op each too (Phi-4's
// aten_scaled_dot_product_attention_default: the attention, which no rule fuses through a call). The
// rules cannot see through a call, so the optimizer inlines them first, as ONNX Runtime does when it
// loads the model. Functions of modules (experimental-experiment's aten_local_function, xexp's own) are
// the user's structure: they stay functions.
#include <string_view>

#include "xexp/ir/model.hpp"

namespace xexp::functions {

inline bool is_op_library_function(const ir::Function& f) {
  const std::string_view domain = f.domain;
  return domain.starts_with("pkg.onnxscript.torch_lib") ||
         (domain == "aten" && std::string_view(f.name).starts_with("aten_"));
}

}  // namespace xexp::functions
