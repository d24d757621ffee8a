#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite: README's second quick-start command, and what CI runs last.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# NVIDIA's NCCL as Debian packages it, for the realnccl label (a download of about 210 MB the first time, then
# cached in build/real-nccl). Where it cannot be had, those tests say so and are skipped; the rest still runs.
scripts/real-nccl.sh >/dev/null || echo "test.sh: the realnccl tests will be skipped (see above)" >&2
scripts/build.sh
ctest --preset default -j "$(nproc)" --timeout 600
