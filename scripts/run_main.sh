#!/usr/bin/env bash
# Installs what is missing, builds the xexp command line tool and runs its main job: build the
# built-in demo LLM, print it and write xexp_demo.onnx into the repository root.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JOBS="${JOBS:-$(nproc)}"

bash "$ROOT/scripts/install_deps.sh"
cmake -S "$ROOT" -B "$ROOT/build/main" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DXEXP_BUILD_TESTS=OFF -DXEXP_BUILD_BENCH=OFF -DXEXP_BUILD_CLI=ON
cmake --build "$ROOT/build/main" --target xexp_cli -j "$JOBS"
cd "$ROOT"
"$ROOT/build/main/tools/xexp/xexp"
