#pragma once
// Names the builder gives to initializers, as experimental-experiment's GraphBuilder does:
// init<elem type number>_s<dims joined by x>_<values joined by _, for int64 tensors of at most 5
// elements>: init1_s3x1_, init7_s2_0_1, init1_s_ (a float scalar), init7_s3_1_30_-1. Small ones are
// deduplicated by ir::initializer_dedup_key.
#include <cstdint>
#include <string>

#include "xexp/core/tensor.hpp"

namespace xexp {

inline std::string initializer_base_name(const Tensor& t) {
  std::string name = "init" + std::to_string(static_cast<int>(t.type())) + "_s";
  for (std::size_t k = 0; k < t.dims().size(); ++k) {
    if (k) name += 'x';
    name += std::to_string(t.dims()[k]);
  }
  name += "_";
  if (t.type() == ElemType::Int64 && t.size() <= 5) {
    auto values = t.data<int64_t>();
    for (std::size_t k = 0; k < values.size(); ++k) {
      if (k) name += '_';
      name += std::to_string(values[k]);
    }
  }
  return name;
}

}  // namespace xexp
