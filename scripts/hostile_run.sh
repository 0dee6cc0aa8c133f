#!/usr/bin/env bash
# Runs `xexp print`, `optimize`, `run --random` and `inline` on every model of a folder (the mutants of
# scripts/hostile_mutants.py) and sorts each run: ok, error (one "error:" line, exit 1), crash (a
# signal, or any other exit), hang (killed by the timeout). A dev-time check for issue 11.
#
#   scripts/hostile_run.sh XEXP_BINARY MUTANT_DIR [TIMEOUT_SECONDS] > report.tsv
set -u
xexp=$1
dir=$2
limit=${3:-10}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
declare -A totals
for model in "$dir"/*.onnx; do
  for cmd in print optimize run inline; do
    case $cmd in
      print) args=(print "$model") ;;
      optimize) args=(optimize "$model" -o "$work/out.onnx") ;;
      run) args=(run "$model" --random) ;;
      inline) args=(inline "$model" -o "$work/out.onnx") ;;
    esac
    timeout -s KILL "$limit" "$xexp" "${args[@]}" > /dev/null 2> "$work/err"
    rc=$?
    errors=$(grep -c '^error: ' "$work/err")
    lines=$(wc -l < "$work/err")
    if [ $rc -eq 0 ]; then kind=ok
    elif [ $rc -eq 137 ]; then kind=hang
    elif [ $rc -eq 1 ] && [ "$errors" -eq 1 ] && [ "$lines" -eq 1 ]; then kind=error
    else kind=crash
    fi
    totals[$kind]=$(( ${totals[$kind]:-0} + 1 ))
    printf '%s\t%s\t%s\t%s\n' "$kind" "$rc" "$cmd" "$(basename "$model")" 
    if [ "$kind" = crash ]; then head -c 300 "$work/err" | tr '\n' ' ' | sed 's/^/\t\t/'; echo; fi
  done
done
for k in "${!totals[@]}"; do echo "# $k ${totals[$k]}" >&2; done
