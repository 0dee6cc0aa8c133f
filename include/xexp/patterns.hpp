#pragma once
// The patterns layer (include/xexp/patterns/): the rule library, onnx/ (default set) and ort/
// (onnxruntime set); registry.hpp lists the sets and registers them for rewrite::rules_from_string.
#include "xexp/patterns/registry.hpp"
