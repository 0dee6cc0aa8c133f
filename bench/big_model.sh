#!/usr/bin/env bash
# A model of about 2.4 GB whose weights are in external data (bench/gen_big_external.py): wall time and
# peak resident memory (/usr/bin/time) of `xexp convert` and `xexp optimize` against a plain `cp` of the
# weights file, and a check that every weight comes out bit-identical and that no large tensor is inline.
#
#   bench/big_model.sh [FOLDER]        default /tmp/xexp_big (the model is generated there when missing)
#   XEXP=path/to/xexp RUNS=3 KEEP=1 bench/big_model.sh ...
#
# Prints per command the median wall time of RUNS runs, its ratio to cp's, and the largest peak RSS as a
# fraction of the weights' size. The outputs (and, unless KEEP=1, the generated model) are deleted at the end.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
XEXP="${XEXP:-$ROOT/build/bench/tools/xexp/xexp}"
RUNS="${RUNS:-3}"
PYTHON="${PYTHON:-/usr/bin/python3}"
FOLDER="${1:-/tmp/xexp_big}"
MODEL="$FOLDER/model.onnx"

[[ -x "$XEXP" ]] || { echo "big_model: no xexp binary at $XEXP (set XEXP=...)" >&2; exit 1; }
[[ -f "$MODEL" ]] || "$PYTHON" "$ROOT/bench/gen_big_external.py" make "$FOLDER"
OUT="$(mktemp -d "${TMPDIR:-/tmp}/xexp_big_out.XXXXXX")"
cleanup() {
  rm -rf "$OUT"
  [[ "${KEEP:-0}" == 1 ]] || rm -rf "$FOLDER"
}
trap cleanup EXIT
WEIGHTS=$(stat -c %s "$MODEL.data")

# Runs a command RUNS times; prints "median_seconds max_rss_kb".
measure() {
  local times=() rss=0 line
  for ((k = 0; k < RUNS; ++k)); do
    rm -rf "${OUT:?}"/*
    sync  # each command starts with no write-back of the previous one pending
    line=$(/usr/bin/time -f "%e %M" "$@" 2>&1 >/dev/null | tail -1)
    times+=("${line% *}")
    ((${line#* } > rss)) && rss=${line#* }
  done
  printf '%s %s\n' "$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}')" "$rss"
}

cat "$MODEL.data" >/dev/null  # the weights in the page cache, for every command alike
read -r cp_s cp_kb < <(measure cp "$MODEL.data" "$OUT/weights.data")
printf 'weights: %.3f GB in %s\n' "$(awk -v b="$WEIGHTS" 'BEGIN {print b / 1e9}')" "$MODEL.data"
printf '%-10s %9s %9s %13s %11s\n' command seconds x_cp peak_rss_GB rss/weights
report() {
  awk -v n="$1" -v s="$2" -v kb="$3" -v cp="$cp_s" -v w="$WEIGHTS" \
    'BEGIN {printf "%-10s %9.2f %9.2f %13.3f %11.3f\n", n, s, s / cp, kb * 1024 / 1e9, kb * 1024 / w}'
}
report cp "$cp_s" "$cp_kb"
for command in convert optimize; do
  read -r s kb < <(measure "$XEXP" "$command" "$MODEL" -o "$OUT/$command.onnx")
  report "$command" "$s" "$kb"
  "$XEXP" "$command" "$MODEL" -o "$OUT/$command.onnx" >/dev/null
  "$PYTHON" "$ROOT/bench/gen_big_external.py" check "$MODEL" "$OUT/$command.onnx"
  # Same input, same bytes (the same file name: the model refers to its side file by name).
  mkdir "$OUT/again"
  "$XEXP" "$command" "$MODEL" -o "$OUT/again/$command.onnx" >/dev/null
  for f in "$command.onnx" "$command.onnx.data"; do
    cmp -s "$OUT/$f" "$OUT/again/$f" || { echo "big_model: $command wrote another $f on a second run" >&2; exit 1; }
  done
  rm -rf "${OUT:?}"/*
done
