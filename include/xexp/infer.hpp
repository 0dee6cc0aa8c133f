#pragma once
// The infer layer (include/xexp/infer/): type and shape rules per op, symbolic broadcasting with
// recorded equalities, and the content of values that hold shapes. Entry point: infer/infer.hpp.
#include "xexp/infer/broadcast.hpp"
#include "xexp/infer/context.hpp"
#include "xexp/infer/infer.hpp"
#include "xexp/infer/shape_constraints.hpp"
#include "xexp/infer/state.hpp"
