#!/usr/bin/env bash
# Installs what is missing, builds everything with warnings as errors and runs every test; then
# builds the tests again with AddressSanitizer + UndefinedBehaviorSanitizer and runs them there too;
# last, the libFuzzer harness built in that sanitizer build runs each action for a short time
# (scripts/fuzz.sh; XEXP_CI_FUZZ_SECONDS per action).
# The single-include and packaging (find_package, add_subdirectory, the Debian package, FetchContent)
# checks are ctest tests (SingleInclude.*, Examples.*) and run in the first pass, as does the
# Python module's pytest run (Python.Module): a Python extension would need the sanitizers' runtime
# preloaded into python3.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JOBS="${JOBS:-$(nproc)}"

# Each phase prints how long it took, so that a CI log shows where its time goes.
phase_start=$SECONDS
phase_done() { echo "=== $1 took $((SECONDS - phase_start)) s"; phase_start=$SECONDS; }

bash "$ROOT/scripts/install_deps.sh" --tests
phase_done "install"

echo "=== build (warnings are errors) and test"
# The benchmarks are built in the sanitizer build below, where they compile in a fraction of the time:
# CI checks that they build, it never runs them.
cmake -S "$ROOT" -B "$ROOT/build/ci" -G Ninja -DCMAKE_BUILD_TYPE=Release -DXEXP_WERROR=ON -DXEXP_BUILD_PYTHON=ON \
      -DXEXP_BUILD_BENCH=OFF
cmake --build "$ROOT/build/ci" -j "$JOBS"
phase_done "build"
(cd "$ROOT/build/ci" && ctest --output-on-failure -j "$JOBS")
phase_done "tests"

echo "=== clang 14, AddressSanitizer + UndefinedBehaviorSanitizer: build and test"
# The packaging checks build other projects (nothing of xexp's own code runs there), the slow
# corpus sweeps are covered by the first pass: both are left out under the sanitizers
# (XEXP_SANITIZE_FILTER, a GoogleTest filter). Each test program runs as 4 shards there, not one process
# per test (XEXP_TEST_SHARDS in tests/CMakeLists.txt): a sanitized program takes half a second to start.
# -O0 -g1: quickest to compile (the kernels keep -O1, see CMakeLists.txt), and line numbers in the
# sanitizers' reports. The compiled library is shared there: sanitized, its rules are 350 MB of code, and
# linked statically into each test program they took 6 GB of disk (a CI machine ran out of space).
cmake -S "$ROOT" -B "$ROOT/build/sanitize" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g1" -DXEXP_WERROR=ON -DXEXP_SANITIZE=ON -DXEXP_BUILD_BENCH=ON \
      -DXEXP_BUILD_FUZZERS=ON -DBUILD_SHARED_LIBS=ON -DXEXP_TEST_SHARDS=4
cmake --build "$ROOT/build/sanitize" -j "$JOBS"
phase_done "sanitizer build"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
(cd "$ROOT/build/sanitize" && GTEST_FILTER="${XEXP_SANITIZE_FILTER:--Examples.*:SingleInclude.*:*Corpus*}" \
   ctest --output-on-failure -j "$JOBS" -E "SingleInclude\.")
phase_done "sanitizer tests"

echo "=== fuzzing (tests/fuzz/fuzz_model, built above): each action for ${XEXP_CI_FUZZ_SECONDS:-30} s, failing on any crash"
# A fixed seed and a cap on executions: the same commit explores the same inputs on every CI run (as far as
# the time cap lets it), so a failure is a finding to reproduce, not noise.
XEXP_FUZZ_FLAGS="${XEXP_FUZZ_FLAGS:--seed=1 -runs=4000}" XEXP_FUZZ_BUILD="$ROOT/build/sanitize" JOBS="$JOBS" \
  bash "$ROOT/scripts/fuzz.sh" "${XEXP_CI_FUZZ_SECONDS:-30}"
phase_done "fuzzing"
