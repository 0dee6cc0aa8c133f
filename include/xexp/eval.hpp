#pragma once
// The eval layer (include/xexp/eval/): reference kernels, evaluate_op, the Evaluator and constant folding.
#include "xexp/eval/evaluate_op.hpp"
#include "xexp/eval/evaluator.hpp"
#include "xexp/eval/kernel.hpp"
#include "xexp/eval/tensor_util.hpp"
#include "xexp/eval/fold.hpp"
