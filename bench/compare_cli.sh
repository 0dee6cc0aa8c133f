#!/usr/bin/env bash
# Whole-process timings of the xexp CLI on the same model: `xexp optimize M -o out` against
# `xexp convert M -o out` (load + save only), and ONNX Runtime's own session creation at level 'all'
# (its load + graph optimizations) and 'disabled' (its load only), via tests/ort/run_ort.js.
#
#   bench/compare_cli.sh [MODEL...]        default: $XEXP_BENCH_MODELS/decoder_L32.onnx
#   XEXP=path/to/xexp RUNS=10 bench/compare_cli.sh ...
#
# Uses hyperfine when it is installed, else RUNS timed runs with `date +%s%N` (the median is shown).
# Prints the optimize/convert ratio per model: the optimizer's whole cost relative to reading and
# writing the file.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
XEXP="${XEXP:-$ROOT/build/bench/tools/xexp/xexp}"
RUNS="${RUNS:-10}"
MODELS_DIR="${XEXP_BENCH_MODELS:-/tmp/xexp_bench}"
[[ $# -gt 0 ]] || set -- "$MODELS_DIR/decoder_L32.onnx"

[[ -x "$XEXP" ]] || { echo "compare_cli: no xexp binary at $XEXP (set XEXP=...)" >&2; exit 1; }
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

# Median wall time of a command in milliseconds.
median_ms() {
  if command -v hyperfine >/dev/null; then
    hyperfine --warmup 1 --runs "$RUNS" --export-json "$OUT/h.json" "$1" >/dev/null 2>&1
    python3 -c 'import json,sys; print("%.1f" % (1000 * json.load(open(sys.argv[1]))["results"][0]["median"]))' "$OUT/h.json"
    return
  fi
  local times=() t0 t1
  eval "$1" >/dev/null  # warm-up (page cache)
  for ((k = 0; k < RUNS; ++k)); do
    t0=$(date +%s%N)
    eval "$1" >/dev/null
    t1=$(date +%s%N)
    times+=($(((t1 - t0) / 1000)))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.1f\n", a[int((NR + 1) / 2)] / 1000}'
}

printf '%-28s %7s %12s %12s %9s %14s %14s\n' model nodes convert_ms optimize_ms ratio ort_all_ms ort_disabled_ms
for model in "$@"; do
  [[ -f "$model" ]] || { echo "compare_cli: no model $model (generate it with bench/gen_decoder.py)" >&2; exit 1; }
  convert=$(median_ms "'$XEXP' convert '$model' -o '$OUT/converted.onnx'")
  optimize=$(median_ms "'$XEXP' optimize '$model' -o '$OUT/optimized.onnx'")
  nodes=$("$XEXP" optimize "$model" -o "$OUT/optimized.onnx" | sed -n 's/.*: \([0-9]* -> [0-9]*\) nodes.*/\1/p' | tr -d ' ')
  ort_all=$(node "$ROOT/tests/ort/run_ort.js" session "$model" --level all --threads 1 --repeat "$RUNS" | awk '{print $2}')
  ort_disabled=$(node "$ROOT/tests/ort/run_ort.js" session "$model" --level disabled --threads 1 --repeat "$RUNS" | awk '{print $2}')
  ratio=$(awk -v a="$optimize" -v b="$convert" 'BEGIN {printf "%.2f", a / b}')
  printf '%-28s %7s %12s %12s %9s %14s %14s\n' "$(basename "$model")" "$nodes" "$convert" "$optimize" "$ratio" \
         "$ort_all" "$ort_disabled"
done
