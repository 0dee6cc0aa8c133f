#pragma once
// The optimizer layer (include/xexp/optimizer/): see docs/ARCHITECTURE.md.
#include "xexp/optimizer/intermediate_functions.hpp"
#include "xexp/optimizer/modules_as_functions.hpp"
#include "xexp/optimizer/optimize_model.hpp"
#include "xexp/optimizer/options.hpp"
#include "xexp/optimizer/report.hpp"
#include "xexp/optimizer/rules_waiting.hpp"
#include "xexp/optimizer/steps.hpp"
