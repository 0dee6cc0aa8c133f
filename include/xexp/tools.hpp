#pragma once
// The tools layer (include/xexp/tools/): see docs/ARCHITECTURE.md.
#include "xexp/tools/compare.hpp"
#include "xexp/tools/dot.hpp"
#include "xexp/tools/dump.hpp"
#include "xexp/tools/inputs.hpp"
#include "xexp/tools/printer.hpp"
#include "xexp/tools/run.hpp"
