#pragma once
// The tools layer (include/xexp/tools/): see docs/ARCHITECTURE.md.
#include "xexp/tools/printer.hpp"
#include "xexp/tools/optimize.hpp"
