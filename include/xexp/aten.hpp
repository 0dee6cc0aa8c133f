#pragma once
// The aten layer (include/xexp/aten/): torch's aten-level graphs lowered to ONNX; see docs/ARCHITECTURE.md.
#include "xexp/aten/converters.hpp"
#include "xexp/aten/linear_layers.hpp"
#include "xexp/aten/lower.hpp"
