// Compiled mode (see include/xexp/core/config.hpp): the built-in rule sets, instantiated once.
#define XEXP_BUILD_RULES
#include "xexp/patterns/registry.hpp"
