#!/usr/bin/env bash
# Installs what xexp needs to build and test on Debian 12, skipping what is already there:
# the compilers and build tools, the libraries (protobuf, onnx, range-v3, CLI11, GoogleTest, Google
# Benchmark), ONNX's backend test data, and ONNX Runtime (the npm package onnxruntime-node, which ships
# a CPU libonnxruntime; the tests compare xexp's results with it). Run as root (or with sudo available).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

PACKAGES=(build-essential cmake ninja-build libprotobuf-dev protobuf-compiler libonnx-dev librange-v3-dev
          googletest libgtest-dev libbenchmark-dev libcli11-dev libonnx-testdata)
# --tests: also clang 14 and its sanitizer runtime (the tests' sanitizer pass builds with clang, so that
# CI compiles xexp with both supported compilers), what the Python module (XEXP_BUILD_PYTHON) builds and
# is tested with, and pkg-config (the Debian package's test builds a program with its .pc files).
if [ "${1:-}" = "--tests" ]; then
  PACKAGES+=(clang-14 libclang-rt-14-dev pybind11-dev python3-dev python3-pytest python3-onnx python3-numpy
             python3-torch
             pkg-config)
fi
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node may come from elsewhere than Debian (a newer nodejs bundles its own npm): only install what is
# absent, never replace a working node.
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)

if [ ${#missing[@]} -gt 0 ]; then
  echo "install_deps: installing ${missing[*]}"
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi

# onnxruntime-node: --ignore-scripts because its install script would download extra binaries; the
# CPU library it needs is inside the package already.
if ! node "$ROOT/tests/ort/run_ort.js" version >/dev/null 2>&1; then
  echo "install_deps: installing onnxruntime-node into tests/ort"
  (cd "$ROOT/tests/ort" && npm ci --ignore-scripts --no-audit --no-fund)
fi
echo "install_deps: ONNX Runtime $(node "$ROOT/tests/ort/run_ort.js" version) ready"
