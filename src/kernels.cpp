// Compiled mode (see include/xexp/core/config.hpp): the evaluator's kernels, compiled once.
#define XEXP_BUILD_KERNELS
#include "xexp/eval/evaluate_op.hpp"
