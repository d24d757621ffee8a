#!/usr/bin/env bash
# GPU check: a real NCCL program (nccl_allreduce_smoke) with NCCL loading our plugin. Passes when the program
# succeeds and NCCL's log shows the plugin's INFO line with the profile's rules applied. Exits 77 (ctest: skip)
# with "no CUDA device: ..." where there is no GPU.
set -uo pipefail
smoke=$1 plugin=$2 profile_src=$3

# The plugin refuses profiles others could rewrite: give it a private copy.
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp "$profile_src" "$dir/profile.toml"

out=$(NCCL_TUNER_PLUGIN="$plugin" NCCL_AUTOTUNE_PROFILE="$dir/profile.toml" NCCL_DEBUG=INFO \
  NCCL_DEBUG_SUBSYS=INIT,TUNING "$smoke" 2>&1)
rc=$?
echo "$out"
if [[ $rc -eq 77 ]]; then
  grep -m1 "no CUDA device" <<<"$out" >/dev/null || echo "no CUDA device: the smoke program found none"
  exit 77
fi
if [[ $rc -ne 0 ]]; then
  echo "FAIL: the NCCL program failed (exit $rc) with the plugin loaded"
  exit 1
fi
if ! grep -E "NCCL INFO .*TUNER/Autotune: profile $dir/profile.toml \(TOML, source imported[^)]*\): 1 of 1 rules apply" <<<"$out" >/dev/null; then
  echo "FAIL: the plugin's INFO line is missing from NCCL's log"
  exit 1
fi
if grep -E "NCCL WARN .*TUNER/Autotune" <<<"$out" >/dev/null; then
  echo "FAIL: the plugin warned"
  exit 1
fi
echo "PASS: NCCL loaded the autotune plugin and the program succeeded"
