#pragma once
// The rule sets. Including this header registers "default" (patterns/default_rules.hpp), "onnxruntime"
// and the opt-in "onnxruntime_gpu", "onnxruntime_approx" and "onnxruntime_training"
// (patterns/onnxruntime_rules.hpp) in rewrite::Catalog::global(), so that
// rewrite::rules_from_string("default+onnxruntime") finds them.
#include "xexp/patterns/default_rules.hpp"
#include "xexp/patterns/onnxruntime_rules.hpp"

namespace xexp::patterns {

namespace detail {
inline const bool registered = [] {
  rewrite::Catalog::global().add_set("default", default_rules());
  rewrite::Catalog::global().add_set("onnxruntime", onnxruntime_rules());
  rewrite::Catalog::global().add_set("onnxruntime_gpu", onnxruntime_gpu_rules());
  rewrite::Catalog::global().add_set("onnxruntime_approx", onnxruntime_approx_rules());
  rewrite::Catalog::global().add_set("onnxruntime_training", onnxruntime_training_rules());
  return true;
}();
}  // namespace detail

}  // namespace xexp::patterns
