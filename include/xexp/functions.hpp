#pragma once
// The functions layer (include/xexp/functions/): see docs/ARCHITECTURE.md.
#include "xexp/functions/infer_call.hpp"
#include "xexp/functions/inliner.hpp"
#include "xexp/functions/module_export.hpp"
#include "xexp/functions/outline.hpp"
#include "xexp/functions/registry.hpp"
#include "xexp/functions/same_function.hpp"
#include "xexp/functions/torch_modules.hpp"
#include "xexp/functions/type_bodies.hpp"
