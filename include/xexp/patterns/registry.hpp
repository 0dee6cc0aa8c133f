#pragma once
// The rule sets, in the original's list order (the order decides which of two overlapping matches
// wins). Including this header registers "default" and "onnxruntime" in rewrite::Catalog::global(),
// so that rewrite::rules_from_string("default+onnxruntime") finds them.
#include "xexp/patterns/onnx/cast.hpp"
#include "xexp/patterns/onnx/matmul_add.hpp"
#include "xexp/patterns/onnx/transpose_transpose.hpp"
#include "xexp/rewrite/rule_set.hpp"

namespace xexp::patterns {

// The default set: standard ONNX operators only.
inline rewrite::RuleSet default_rules() {
  return {
      cast_rule(),
      matmul_add_rule(),
      transpose_transpose_rule(),
  };
}

// The onnxruntime set: fusions into com.microsoft contrib operators.
inline rewrite::RuleSet onnxruntime_rules() { return {}; }

namespace detail {
inline const bool registered = [] {
  rewrite::Catalog::global().add_set("default", default_rules());
  rewrite::Catalog::global().add_set("onnxruntime", onnxruntime_rules());
  return true;
}();
}  // namespace detail

}  // namespace xexp::patterns
