// Compiled mode (see include/xexp/core/config.hpp): the default rule set, instantiated once.
#define XEXP_BUILD_DEFAULT_RULES
#include "xexp/patterns/registry.hpp"
