// The tests compile the evaluator's kernels once, here, instead of once per test program
// (see XEXP_SEPARATE_KERNELS in include/xexp/eval/evaluate_op.hpp).
#define XEXP_KERNELS_IMPLEMENTATION
#include "xexp/eval/evaluate_op.hpp"
