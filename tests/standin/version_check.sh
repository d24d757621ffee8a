#!/usr/bin/env bash
# NCCL_STANDIN_VERSION makes the stand-in another NCCL release: ncclGetVersion reports it and the tuner
# plugin is looked up with that release's symbol order (2.24: v4 first, 2.28.9: v5, 2.30: v6).
# Usage: version_check.sh BUILD_DIR PLUGIN
. "$(dirname "$0")/lib.sh"
plugin=$2
[ -x "$job" ] || need_mpirun
use_standin
for pair in 2.24.3:v4 2.28.9:v5 2.30.7:v6; do
  version=${pair%:*} want=${pair#*:}
  NCCL_STANDIN_VERSION=$version NCCL_TUNER_PLUGIN=$plugin NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT \
    "$job" --sizes 1K --iters 1 >"$work/out" 2>&1 || { cat "$work/out"; fail "the job failed under NCCL $version"; }
  grep -q "^NCCL version $version+cuda" "$work/out" || fail "NCCL $version: not the version the stand-in reported"
  grep -q "TUNER/Plugin: Using autotune ($want) from $plugin" "$work/out" ||
    fail "NCCL $version: the plugin was not loaded as $want: $(grep TUNER "$work/out" | head -3)"
  echo "NCCL $version: plugin loaded as $want"
done
NCCL_STANDIN_VERSION=2.x "$job" --sizes 1K --iters 1 >"$work/out" 2>&1
rc=$?
[ "$rc" -eq 2 ] && grep -q "nccl-standin: <env NCCL_STANDIN_VERSION>: expected a version such as 2.30.7 or 23007, found '2.x'" "$work/out" ||
  fail "a bad NCCL_STANDIN_VERSION: exit $rc, $(cat "$work/out")"
echo "OK: the reported version decides the plugin's symbol; a bad value stops with status 2"
