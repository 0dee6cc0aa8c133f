#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz with clang-14 (ASan + UBSan) and runs each for SECONDS,
# seeded from ONNX's backend test models and the shared models. Crashes land in build/fuzz/crashes/<action>/;
# each one found becomes a regression test (tests/test_hostile_inputs.cpp). Not part of CI (yet).
#
#   scripts/fuzz.sh SECONDS [ACTION ...]     actions: load print optimize inline run (default: all)
set -euo pipefail
seconds=${1:?usage: scripts/fuzz.sh SECONDS [ACTION ...]}
shift
actions=("$@")
[ ${#actions[@]} -eq 0 ] && actions=(load print optimize inline run)
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/fuzz
shared=$root/../shared

CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DXEXP_BUILD_FUZZERS=ON -DXEXP_BUILD_TESTS=OFF \
  -DXEXP_BUILD_BENCH=OFF -DXEXP_BUILD_CLI=OFF > "$build.configure.log"
cmake --build "$build" -j1 --target $(printf 'fuzz_%s ' "${actions[@]}")

# Seeds: small models only (libFuzzer mutates whole inputs; big ones make every execution slow).
seeds=$build/seeds
if [ ! -d "$seeds" ]; then
  mkdir -p "$seeds"
  for f in /usr/share/libonnx-testdata/data/node/*/model.onnx; do
    cp "$f" "$seeds/$(basename "$(dirname "$f")").onnx"
  done
  find "$shared" -name '*.onnx' -size -1M -exec cp {} "$seeds/" \; 2>/dev/null || true
fi

for action in "${actions[@]}"; do
  corpus=$build/corpus/$action
  crashes=$build/crashes/$action
  mkdir -p "$corpus" "$crashes"
  echo "== fuzz_$action for ${seconds}s"
  "$build/tests/fuzz/fuzz_$action" "$corpus" "$seeds" -max_total_time="$seconds" -timeout=20 \
    -rss_limit_mb=4096 -max_len=1048576 -artifact_prefix="$crashes/" -print_final_stats=1 2>&1 |
    grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|==[0-9]+==ERROR|SUMMARY|artifact_prefix|Test unit written)' || true
  echo "crashes: $(find "$crashes" -type f | wc -l) in $crashes"
done
