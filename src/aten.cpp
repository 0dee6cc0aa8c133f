// Compiled mode (see include/xexp/core/config.hpp): the aten converters, compiled once.
#define XEXP_BUILD_ATEN
#include "xexp/aten/converters.hpp"
