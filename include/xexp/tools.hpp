#pragma once
// The tools layer (include/xexp/tools/): see docs/ARCHITECTURE.md.
#include "xexp/tools/compare.hpp"
#include "xexp/tools/dot.hpp"
#include "xexp/tools/dump.hpp"
#include "xexp/tools/inputs.hpp"
#include "xexp/tools/intermediate_functions.hpp"
#include "xexp/tools/optimize.hpp"
#include "xexp/tools/optimize_modules.hpp"
#include "xexp/tools/printer.hpp"
#include "xexp/tools/rules_waiting.hpp"
#include "xexp/tools/run.hpp"
