#pragma once
// The onnx layer (include/xexp/onnx/): see docs/ARCHITECTURE.md.
