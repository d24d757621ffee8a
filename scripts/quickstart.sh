#!/usr/bin/env bash
# README's first quick-start command: installs the dependencies, builds, and runs the main job.
# On a machine with GPUs it calibrates them for real; without GPUs it runs a simulated calibration of a bundled
# example cluster (an 8x H100 node with NVSwitches and 8 NDR NICs), clearly labelled "simulated".
set -euo pipefail
cd "$(dirname "$0")/.."
AUTOTUNE_DEPS=build scripts/install-deps.sh
scripts/build.sh nccl-autotune nccl-tuner-autotune
store="${NCCL_AUTOTUNE_STORE:-$PWD/build/store}"
if nvidia-smi -L >/dev/null 2>&1; then
  exec build/cli/nccl-autotune tune --store "$store" --max-bytes 1G --report "$store/report.html" "$@"
fi
echo "quickstart: no GPU here, so this is a SIMULATED calibration of the bundled example cluster h100-8x"
exec build/cli/nccl-autotune tune --simulate --example h100-8x --store "$store" --report "$store/report.html" "$@"
