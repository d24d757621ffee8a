#!/usr/bin/env bash
# Every CUDA and NCCL function a program of the project asks for (undefined in it, with the version node it
# asks for: cudaMalloc@libcudart.so.13) is defined by the stand-ins, so that a new call in the runner or a
# check program cannot fail only at run time. Usage: exports_check.sh BUILD_DIR PROGRAM...
set -uo pipefail
lib=$1/tests/standin/lib
shift
defined=$( (nm -D --defined-only "$lib/libcudart.so.13"; nm -D --defined-only "$lib/libnccl.so.2") |
  awk '{print $3}' | sed 's/@@/@/')
missing=0
for program in "$@"; do
  for symbol in $(nm -D --undefined-only "$program" | awk '{print $2}' | grep -E '^(cuda|nccl)'); do
    # Unversioned references match either way; versioned ones need the same node.
    if ! grep -qxF "$symbol" <<<"$defined" && ! grep -qx "${symbol}@.*" <<<"$defined"; then
      echo "MISSING: $symbol, which $(basename "$program") calls"
      missing=$((missing + 1))
    fi
  done
done
[ "$missing" -eq 0 ] || { echo "FAIL: $missing function(s) the stand-ins do not export"; exit 1; }
echo "OK: the stand-ins export every CUDA and NCCL function $# program(s) call"
