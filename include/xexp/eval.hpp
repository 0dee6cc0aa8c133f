#pragma once
// The eval layer (include/xexp/eval/): reference kernels, evaluate_op, the Evaluator, constant folding
// and the replacement of an If on a constant condition by its taken branch.
#include "xexp/eval/evaluate_op.hpp"
#include "xexp/eval/evaluator.hpp"
#include "xexp/eval/kernel.hpp"
#include "xexp/eval/tensor_util.hpp"
#include "xexp/eval/fold.hpp"
#include "xexp/eval/constant_if.hpp"
