#!/usr/bin/env bash
# Configures and builds the release tree (preset default, build/): everything, or the targets named.
# Usage: scripts/build.sh [TARGET...]; BUILD_JOBS sets the parallelism (default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset default >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build --preset default -j "${BUILD_JOBS:-$(nproc)}" "${targets[@]}"
