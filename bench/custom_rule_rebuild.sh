#!/usr/bin/env bash
# The edit-compile cycle of a custom rule, as a user builds examples/custom_rule against this source tree
# (`cmake -DXEXP_SOURCE=...`, Release): configure, build everything once (xexp's compiled library too),
# touch the rule's header, rebuild, and print how long that rebuild took.
#
#   bench/custom_rule_rebuild.sh [BUILD_DIR] [CMAKE_ARG...]   default: build/custom_rule_rebuild
#   JOBS=2 bench/custom_rule_rebuild.sh build/cr -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
#
# The timed rebuild runs with CCACHE_DISABLE=1: touching a header leaves its contents as they were, and
# a compiler cache would answer from the first build instead of compiling. Goal: under 15 s on 2 cores.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-$ROOT/build/custom_rule_rebuild}"
[[ $# -gt 0 ]] && shift
JOBS="${JOBS:-2}"
RULE="$ROOT/examples/custom_rule/quick_gelu_rule.hpp"

cmake -S "$ROOT/examples/custom_rule" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DXEXP_SOURCE="$ROOT" "$@"
cmake --build "$BUILD" -j "$JOBS"

touch "$RULE"
start=$(date +%s%N)
CCACHE_DISABLE=1 cmake --build "$BUILD" -j "$JOBS"
end=$(date +%s%N)
echo "custom_rule: rebuild after touching $(basename "$RULE"): $(awk -v ns=$((end - start)) 'BEGIN { printf "%.1f", ns / 1e9 }') s"
