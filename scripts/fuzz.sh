#!/usr/bin/env bash
# Runs the libFuzzer harness of tests/fuzz (fuzz_model, clang 14 with ASan + UBSan) for SECONDS per action,
# seeded from ONNX's backend test models and the small shared models. CI runs it for a short time on its
# sanitizer build (scripts/run_tests.sh); for a long run, call it by hand. Crashes, sanitizer reports,
# leaks, hangs (an input running over 60 s) and out-of-memory inputs land in BUILD/fuzz/crashes/<action>/
# and make the script exit 1; each one found becomes a regression test (tests/test_hostile_inputs.cpp).
# Reproduce one with
#   XEXP_FUZZ_ACTION=<action> BUILD/tests/fuzz/fuzz_model <crash file>
#
#   scripts/fuzz.sh [--long] SECONDS [ACTION ...]     actions: load print optimize inline run (default: all)
# --long, the campaign mode: seeds from ONNX's node tests, every small model of ../shared (followed when it
# is a symbolic link) and the hostile corpus (../shared/corpus/hostile); the dictionary tests/fuzz/onnx.dict
# (ONNX field tags, extreme varints, op names); the structure-aware mutator of tests/fuzz/structured_mutator.hpp
# (XEXP_FUZZ_STRUCTURED=1: attributes, dims, element types, tensor values, wiring, deep and wide function
# graphs); libFuzzer's own random seed (printed in the log) unless XEXP_FUZZ_FLAGS gives -seed=N.
# JOBS: how many actions fuzz at once (default 1).
# XEXP_FUZZ_FLAGS: more libFuzzer flags (e.g. "-fork=1 -ignore_crashes=1" to go on after a crash).
# XEXP_FUZZ_BUILD=DIR: a build configured with -DXEXP_SANITIZE=ON -DXEXP_BUILD_FUZZERS=ON and built (CI's
# build/sanitize); without it, build/fuzz is configured and built with only the library and the harness.
set -euo pipefail
long=0
if [ "${1:-}" = --long ]; then long=1; shift; fi
seconds=${1:?usage: scripts/fuzz.sh [--long] SECONDS [ACTION ...]}
shift
actions=("$@")
[ ${#actions[@]} -eq 0 ] && actions=(load print optimize inline run)
root=$(cd "$(dirname "$0")/.." && pwd)
shared=$root/../shared
build=${XEXP_FUZZ_BUILD:-}
if [ -z "$build" ]; then
  build=$root/build/fuzz
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DXEXP_SANITIZE=ON -DXEXP_BUILD_FUZZERS=ON \
    -DXEXP_BUILD_TESTS=OFF -DXEXP_BUILD_BENCH=OFF -DXEXP_BUILD_CLI=OFF > "$build.configure.log"
  cmake --build "$build" -j "${JOBS:-1}" --target fuzz_model
fi
work=$build/fuzz

# Seeds: small models only (libFuzzer mutates whole inputs; big ones make every execution slow). find -L:
# ../shared may be a symbolic link (a worktree's), and so may its folders. The long mode adds the hostile
# corpus under names of their own (its files would otherwise overwrite each other's seeds).
seeds=$work/seeds
[ $long -eq 1 ] && seeds=$work/seeds-long
if [ ! -d "$seeds" ]; then
  mkdir -p "$seeds"
  for f in /usr/share/libonnx-testdata/data/node/*/model.onnx; do
    [ -f "$f" ] && cp "$f" "$seeds/$(basename "$(dirname "$f")").onnx"
  done
  if [ -d "$shared" ]; then find -L "$shared" -name '*.onnx' -size -1024k -exec cp {} "$seeds/" \; ; fi
  if [ $long -eq 1 ] && [ -d "$shared/corpus/hostile" ]; then
    for f in "$shared"/corpus/hostile/*/*.onnx; do cp "$f" "$seeds/hostile_$(basename "$(dirname "$f")")_$(basename "$f")"; done
  fi
fi
long_flags=()
if [ $long -eq 1 ]; then
  export XEXP_FUZZ_STRUCTURED=1
  long_flags=(-dict="$root/tests/fuzz/onnx.dict" -timeout=20)
fi

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
# The actions run side by side, JOBS at a time (each fuzzer is one process on one core); their reports
# follow in the actions' order.
fuzz_action() {
  local action=$1 crashes=$work/crashes/$1 status=0
  mkdir -p "$work/corpus/$action" "$crashes"
  XEXP_FUZZ_ACTION=$action "$build/tests/fuzz/fuzz_model" "$work/corpus/$action" "$seeds" -max_total_time="$seconds" \
    -timeout=60 -rss_limit_mb=2048 -max_len=1048576 -artifact_prefix="$crashes/" -print_final_stats=1 \
    "${long_flags[@]}" ${XEXP_FUZZ_FLAGS:-} > "$work/$action.log" 2>&1 || status=$?
  echo "$status" > "$work/$action.status"
}
for action in "${actions[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "${JOBS:-1}" ]; do wait -n || true; done
  fuzz_action "$action" &
done
wait
failed=()
for action in "${actions[@]}"; do
  log=$work/$action.log
  status=$(cat "$work/$action.status")
  echo "== fuzz_model $action for ${seconds}s"
  grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb)|INITED|^Done|Seed:' "$log" || true
  if [ "$status" -ne 0 ]; then
    failed+=("$action")
    grep -v -E '^#[0-9]+' "$log" | tail -n 60
    echo "fuzz_model $action FAILED (exit $status); its inputs are in $work/crashes/$action"
  fi
done
if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzzing found crashes in: ${failed[*]}"
  exit 1
fi
