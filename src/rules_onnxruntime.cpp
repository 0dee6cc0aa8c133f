// Compiled mode (see include/xexp/core/config.hpp): the onnxruntime rule set, instantiated once.
#define XEXP_BUILD_ONNXRUNTIME_RULES
#include "xexp/patterns/registry.hpp"
