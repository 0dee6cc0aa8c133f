#pragma once
// The functions layer (include/xexp/functions/): see docs/ARCHITECTURE.md.
#include "xexp/functions/inliner.hpp"
