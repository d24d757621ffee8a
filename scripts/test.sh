#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite: README's second quick-start command, and what CI runs last.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
ctest --preset default -j "$(nproc)" --timeout 600
