#!/usr/bin/env bash
# The full differential sweep against ONNX Runtime: test_ort_differential with XEXP_ORT_DIFF_SCALE
# times the cases CI runs (every op the evaluator supports on generated cases, every rule's positive
# case on more random inputs). Prints the table of cases per op class, ONNX Runtime's refusals and
# departures, and every mismatch.
#   scripts/ort_differential_sweep.sh [BUILD_DIR] [SCALE]      (defaults: build/ci, 10)
set -euo pipefail
build_dir=${1:-build/ci}
scale=${2:-10}
binary="$build_dir/tests/test_ort_differential"
if [[ ! -x "$binary" ]]; then
  echo "error: $binary not found; build it with: cmake --build $build_dir --target test_ort_differential" >&2
  exit 1
fi
XEXP_ORT_DIFF_SCALE="$scale" "$binary" --gtest_filter='OrtDifferential.*'
