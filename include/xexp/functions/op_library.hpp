#pragma once
// Functions an exporter writes for single operators of its own op library, not for the model's
// modules: onnxscript's torch_lib (domains pkg.onnxscript.torch_lib and pkg.onnxscript.torch_lib.common),
// which torch's dynamo exporter can leave in the file, one ATen op each (aten_view is Cast + Reshape,
// aten_t an If on the rank, aten_softmax_no_dtype an If on IsScalar). The rules cannot
// see through a call, so the optimizer inlines them first, as ONNX Runtime does when it loads the model.
// Functions of modules (experimental-experiment's aten_local_function, xexp's own) and the `aten`
// functions experimental-experiment keeps when asked to (aten_as_function) are the user's structure:
// they stay functions.
#include <string_view>

#include "xexp/ir/model.hpp"

namespace xexp::functions {

inline bool is_op_library_function(const ir::Function& f) {
  return std::string_view(f.domain).starts_with("pkg.onnxscript.torch_lib");
}

}  // namespace xexp::functions
