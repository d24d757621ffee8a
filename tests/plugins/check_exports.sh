#!/usr/bin/env bash
# The plugin exports exactly NCCL's tuner structs and the sweep hook (nm -D), and needs nothing at run time
# beyond the C library (readelf NEEDED): no libstdc++ (linked in statically), no CUDA, hwloc or MPI.
set -euo pipefail
lib=$1
expected="nccl_autotune_force
nccl_autotune_hook_version
nccl_autotune_last
ncclTunerPlugin_v2
ncclTunerPlugin_v3
ncclTunerPlugin_v4
ncclTunerPlugin_v5
ncclTunerPlugin_v6
ncclTunerPlugin_v7"
actual=$(nm -D --defined-only "$lib" | awk '{print $3}' | sed 's/@.*//' | LC_ALL=C sort)
if [[ "$actual" != "$(LC_ALL=C sort <<<"$expected")" ]]; then
  echo "FAIL: exported symbols differ from the tuner ABI + sweep hook:"
  diff <(LC_ALL=C sort <<<"$expected") <(echo "$actual") || true
  exit 1
fi
# Sanitizer builds add their runtime; nothing else is allowed.
bad=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' |
  grep -Ev '^(libc\.so\.6|libm\.so\.6|ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1|libpthread\.so\.0|libdl\.so\.2|lib(a|t|ub)san\.so\.[0-9]+)$' || true)
if [[ -n "$bad" ]]; then
  echo "FAIL: the plugin needs libraries it must not: $bad"
  exit 1
fi
echo "exports: $(echo $actual); needs only the C library"
