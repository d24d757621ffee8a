#!/bin/sh
# On a machine with GPUs: nccl-autotune bench for AllReduce on one GPU and on every GPU, forcing Ring/Simple
# through the plugin hook and then NCCL's default; the results must be correct (#wrong 0, exit 0).
# Exits 77 (skip) without a CUDA device. Usage: gpu_bench_check.sh NCCL_AUTOTUNE_BINARY
set -eu
exe=$1
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "no CUDA device: nvidia-smi finds no GPU"; exit 77
fi
count=$(nvidia-smi -L | wc -l)
for gpus in 1 "$count"; do
  devs=$(seq -s, 0 $((gpus - 1)))
  CUDA_VISIBLE_DEVICES=$devs "$exe" bench -c allreduce -b 8 -e 64M -f 8 --algo ring --proto simple
  CUDA_VISIBLE_DEVICES=$devs "$exe" bench -c allreduce -b 8 -e 64M -f 8
done
