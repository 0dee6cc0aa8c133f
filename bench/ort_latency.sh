#!/usr/bin/env bash
# Does xexp's output run faster in ONNX Runtime than the original does? (CPU provider, one thread)
#
#   XEXP=build/bench/tools/xexp/xexp [PATTERNS=SPEC] bench/ort_latency.sh [MODEL.onnx ...]
#
# For each model (default: every model of ../shared/models and tests/data/models with a NAME.json naming
# its input files), it runs `xexp optimize` (with `--patterns SPEC` when PATTERNS is set; the default is
# what a user gets), then times, in one node process, on the model's own inputs (tests/ort/run_ort.js
# latency with two models):
#   ort    the original model at ONNX Runtime's optimization level 'all' (what a user gets without xexp)
#   xexp   xexp's output at level 'all' (xexp, then ONNX Runtime's own optimizations, as a user runs it)
# side by side: ROUNDS rounds (default 200), each running both sessions BATCH times (default 10), the
# first of the two alternating. It prints each model's median time per run of both, `ratio` (the median
# over the rounds of xexp's time over ort's in the same round: below 1, xexp's output is faster), the
# quartiles of that ratio (how far the rounds spread: a q25..q75 range that straddles 1 decides
# nothing), the largest difference of the outputs, and at the end the geometric mean of the ratios.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
xexp=${XEXP:-$here/build/bench/tools/xexp/xexp}
shared=${XEXP_SHARED_DIR:-$here/../shared}
rounds=${ROUNDS:-200}
batch=${BATCH:-10}
runner=$here/tests/ort/run_ort.js
[[ -x $xexp ]] || { echo "error: no xexp binary at $xexp (set XEXP)" >&2; exit 1; }

models=("$@")
if [[ ${#models[@]} -eq 0 ]]; then
  for m in "$shared"/models/*.onnx "$here"/tests/data/models/*.onnx; do
    base=$(basename "$m" .onnx)
    [[ -f $(dirname "$m")/${base%%.*}.json ]] && models+=("$m")
  done
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# NAME.json (NAME being the file name up to its first dot) -> the INPUTS.json run_ort.js reads.
inputs_for() {
  local model=$1 base json
  base=$(basename "$model" .onnx)
  json=$(dirname "$model")/${base%%.*}.json
  [[ -f $json ]] || { echo "error: no $json naming the inputs of $model" >&2; return 1; }
  node -e '
    const fs = require("fs"), path = require("path");
    const spec = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
    const types = {float32: 1, uint8: 2, int8: 3, int32: 6, int64: 7, bool: 9, float16: 10, float64: 11};
    const dir = path.dirname(process.argv[1]);
    process.stdout.write(JSON.stringify(spec.inputs.map(i => ({
      name: i.name, type: types[i.dtype], dims: i.shape, path: path.resolve(dir, i.file)}))));
  ' "$json"
}

printf '%-34s %6s %6s %9s %9s %7s %7s %7s %10s\n' model nodes xnodes ort_ms xexp_ms ratio q25 q75 max_diff
log_sum=0 count=0
for model in "${models[@]}"; do
  name=$(basename "$model" .onnx)
  inputs=$work/$name.inputs.json
  inputs_for "$model" > "$inputs"
  optimized=$work/$name.xexp.onnx
  summary=$("$xexp" optimize "$model" -o "$optimized" ${PATTERNS:+--patterns "$PATTERNS"} | grep " nodes, wrote ")
  before=$(sed -E 's/.*: ([0-9]+) -> ([0-9]+) nodes.*/\1/' <<< "$summary")
  after=$(sed -E 's/.*: ([0-9]+) -> ([0-9]+) nodes.*/\2/' <<< "$summary")
  out=$(node "$runner" latency "$model" "$optimized" "$inputs" --level all --threads 1 --repeat "$rounds" \
          --batch "$batch" --warmup 20)
  read -r ort_ms xexp_ms ratio q25 q75 diff < <(awk '
    $1 == "run_ms" && $2 == 0 {a = $3} $1 == "run_ms" && $2 == 1 {b = $3}
    $1 == "paired" {r = $3; lo = $4; hi = $5} $1 == "max_abs_diff" {d = $3}
    END {print a, b, r, lo, hi, d}' <<< "$out")
  printf '%-34s %6s %6s %9.4f %9.4f %7.3f %7.3f %7.3f %10s\n' "$name" "$before" "$after" "$ort_ms" "$xexp_ms" \
    "$ratio" "$q25" "$q75" "$diff"
  log_sum=$(awk -v s="$log_sum" -v r="$ratio" 'BEGIN {print s + log(r)}')
  count=$((count + 1))
done
awk -v s="$log_sum" -v n="$count" 'BEGIN {if (n) printf "geometric mean of the ratios over %d models: %.3f\n", n, exp(s / n)}'
