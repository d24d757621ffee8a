#!/bin/sh
# Without a GPU, `nccl-autotune bench` (real NCCL, no --simulate) must exit 1 with one stderr line that says
# "no CUDA device: <why>", and print nothing on stdout. Exits 77 (skip) where a GPU is present.
# Usage: no_gpu_bench_check.sh NCCL_AUTOTUNE_BINARY
set -u
exe=$1
if [ -e /dev/nvidia0 ]; then echo "SKIP: a GPU is present"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$exe" bench -c allreduce -b 8 -e 64K -f 8 >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/err"
[ "$rc" -eq 1 ] || { echo "FAIL: exit status $rc, expected 1"; exit 1; }
[ ! -s "$tmp/out" ] || { echo "FAIL: stdout not empty"; cat "$tmp/out"; exit 1; }
[ "$(wc -l <"$tmp/err")" -eq 1 ] || { echo "FAIL: expected one stderr line"; exit 1; }
grep -q "no CUDA device: ." "$tmp/err" || { echo "FAIL: no 'no CUDA device: <why>' message"; exit 1; }
echo "OK: exit 1 with: $(cat "$tmp/err")"
