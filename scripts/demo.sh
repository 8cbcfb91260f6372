#!/usr/bin/env bash
# The main job: build ndx and run `ndx demo` (every example of TensorFlow's documentation of the ops).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DNDX_BUILD_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
./build/ndx demo "$@"
