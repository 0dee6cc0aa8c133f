#!/usr/bin/env bash
# Latency of ONNX Runtime on xexp's optimized model, against ONNX Runtime's own best on the original.
#
#   XEXP=build/bench/tools/xexp/xexp [PATTERNS=SPEC] bench/ort_latency.sh [MODEL.onnx ...]
#
# For each model (default: every model of ../shared/models, whose NAME.json names its input files), it runs
# `xexp optimize --patterns SPEC` (default: default+onnxruntime_cpu, the rule sets for ONNX Runtime's CPU
# provider: this measures CPU latency), then measures with tests/ort/run_ort.js on one thread, in the
# same run and on the same inputs:
#   ort_all   the original model, ONNX Runtime's optimizations at level 'all';
#   xexp      the optimized model, ONNX Runtime's optimizations disabled.
# and prints the median run time of each and the ratio xexp / ort_all (below 1: our offline optimization
# alone beats ONNX Runtime's online one). REPEAT (default 300) runs after WARMUP (default 20) warm-up runs;
# the two measurements alternate ROUNDS times (default 3) and each keeps its best median, so that a burst
# of load from another process does not decide the ratio; worst_ratio (our slowest round over ONNX
# Runtime's fastest) shows how far the rounds spread.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
xexp=${XEXP:-$here/build/bench/tools/xexp/xexp}
shared=${XEXP_SHARED_DIR:-$here/../shared}
repeat=${REPEAT:-300}
warmup=${WARMUP:-20}
rounds=${ROUNDS:-3}
patterns=${PATTERNS:-default+onnxruntime_cpu}
runner=$here/tests/ort/run_ort.js
[[ -x $xexp ]] || { echo "error: no xexp binary at $xexp (set XEXP)" >&2; exit 1; }

models=("$@")
if [[ ${#models[@]} -eq 0 ]]; then
  models=("$shared"/models/*.onnx)
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# NAME.json of ../shared/models -> the INPUTS.json run_ort.js reads (type numbers of TensorProto).
inputs_for() {
  local model=$1 base json
  base=$(basename "$model" .onnx)
  json=$(dirname "$model")/${base%%.*}.json
  [[ -f $json ]] || { echo "error: no $json naming the inputs of $model" >&2; return 1; }
  node -e '
    const fs = require("fs"), path = require("path");
    const spec = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
    const types = {float32: 1, int64: 7, int32: 6, bool: 9, float16: 10, float64: 11};
    const dir = path.dirname(process.argv[1]);
    process.stdout.write(JSON.stringify(spec.inputs.map(i => ({
      name: i.name, type: types[i.dtype], dims: i.shape, path: path.resolve(dir, i.file)}))));
  ' "$json"
}

median_ms() {  # model inputs level -> median run_ms, best of $rounds is taken by the caller
  node "$runner" latency "$1" "$2" --level "$3" --threads 1 --repeat "$repeat" --warmup "$warmup" |
    awk '/^run_ms/ {print $2}'
}

min() { awk -v a="$1" -v b="$2" 'BEGIN {print (a == "" || b < a) ? b : a}'; }
max() { awk -v a="$1" -v b="$2" 'BEGIN {print (a == "" || b > a) ? b : a}'; }

printf '%-32s %6s %6s %10s %10s %7s %12s\n' model nodes xnodes ort_all_ms xexp_ms ratio worst_ratio
for model in "${models[@]}"; do
  name=$(basename "$model" .onnx)
  inputs=$work/$name.inputs.json
  inputs_for "$model" > "$inputs"
  optimized=$work/$name.xexp.onnx
  summary=$("$xexp" optimize "$model" -o "$optimized" --patterns "$patterns" | grep " nodes, wrote ")
  before=$(sed -E 's/.*: ([0-9]+) -> ([0-9]+) nodes.*/\1/' <<< "$summary")
  after=$(sed -E 's/.*: ([0-9]+) -> ([0-9]+) nodes.*/\2/' <<< "$summary")
  best_ort='' best_xexp='' worst_ort='' worst_xexp=''
  for ((r = 0; r < rounds; r++)); do
    ort=$(median_ms "$model" "$inputs" all)
    ours=$(median_ms "$optimized" "$inputs" disabled)
    best_ort=$(min "$best_ort" "$ort") best_xexp=$(min "$best_xexp" "$ours")
    worst_ort=$(max "$worst_ort" "$ort") worst_xexp=$(max "$worst_xexp" "$ours")
  done
  # worst_ratio: our slowest round over ONNX Runtime's fastest. On a shared VM a round's median can move
  # by a third (and a rare round ran three times faster): when ratio and worst_ratio disagree on which
  # side of 1 they are, the run decides nothing.
  printf '%-32s %6s %6s %10.4f %10.4f %7.3f %12.3f\n' "$name" "$before" "$after" "$best_ort" "$best_xexp" \
    "$(awk -v a="$best_xexp" -v b="$best_ort" 'BEGIN {print a / b}')" \
    "$(awk -v a="$worst_xexp" -v b="$best_ort" 'BEGIN {print a / b}')"
done
