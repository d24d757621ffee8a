#!/usr/bin/env bash
# GPU check: `nccl-autotune tune` on the GPUs present (a small allreduce size range, exhaustive) runs its job
# as a worker process and writes a profile with source = "measured" that validates. Exits 77 (ctest: skip)
# with "no CUDA device: ..." where there is no GPU. Against the stand-in NCCL (tests/standin) the profile
# says source = "standin": AUTOTUNE_GPU_CHECK_SOURCE names the source expected (default measured) and
# AUTOTUNE_GPU_CHECK_MAX_BYTES the largest size (default 16M).
set -uo pipefail
exe=$1
source_wanted=${AUTOTUNE_GPU_CHECK_SOURCE:-measured}
max=${AUTOTUNE_GPU_CHECK_MAX_BYTES:-16M}

if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "no CUDA device: nvidia-smi not found"
  exit 77
fi
if ! gpus=$(nvidia-smi -L 2>&1) || ! grep -q '^GPU ' <<<"$gpus"; then
  echo "no CUDA device: nvidia-smi -L lists none (${gpus//$'\n'/ })"
  exit 77
fi
echo "$gpus"

store=$(mktemp -d)
trap 'rm -rf "$store"' EXIT
"$exe" tune --store "$store" --collectives allreduce --min-bytes 1K --max-bytes "$max" --strategy exhaustive \
  --check-bytes "$max"
rc=$?
for log in "$store"/*.parts/*.log; do
  [[ -f $log ]] && { echo "--- $log"; tail -n 40 "$log"; }
done
if [[ $rc -ne 0 ]]; then
  echo "FAIL: tune exited with status $rc"
  exit 1
fi
profile=$(ls "$store"/*.toml 2>/dev/null | head -n 1)
if [[ -z $profile ]]; then
  echo "FAIL: no profile in $store"
  exit 1
fi
cat "$profile"
if ! grep -Eq "^source *= *\"$source_wanted\"" "$profile"; then
  echo "FAIL: the profile does not say source = \"$source_wanted\""
  exit 1
fi
if ! "$exe" profile validate "$profile"; then
  echo "FAIL: the profile does not validate"
  exit 1
fi
echo "PASS: tune measured the GPUs present and wrote a valid $source_wanted profile"
