// Compiled mode (see include/xexp/core/config.hpp): the shape inference rules, compiled once.
#define XEXP_BUILD_INFER
#include "xexp/infer/infer.hpp"
