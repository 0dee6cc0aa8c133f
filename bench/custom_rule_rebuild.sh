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
times="$(mktemp)"
trap 'rm -f "$times"' EXIT
CCACHE_DISABLE=1 /usr/bin/time -f "%e %U %S" -o "$times" cmake --build "$BUILD" -j "$JOBS"
# CPU seconds too (the compiler's and the linker's, user + system): on a machine shared with other
# builds the wall time grows with their load, the CPU time much less.
read -r wall user sys < "$times"
echo "custom_rule: rebuild after touching $(basename "$RULE"): $wall s wall, $(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.1f", u + s }') s CPU"
