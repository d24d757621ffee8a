#!/usr/bin/env bash
# Runs a command with the stand-in CUDA runtime and NCCL in front of the real ones (scripts/standin.sh env),
# for the gpu-labelled check scripts: they run here unchanged but for smaller sizes (their own variables).
# Usage: under_standin.sh BUILD_DIR COMMAND ARGS...
set -euo pipefail
build=$1
shift
eval "$("$(dirname "$0")/../../scripts/standin.sh" env --build "$build")"
exec "$@"
