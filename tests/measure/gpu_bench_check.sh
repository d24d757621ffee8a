#!/bin/sh
# On a machine with GPUs: nccl-autotune bench for AllReduce on one GPU and on every GPU, forcing Ring/Simple
# through the plugin hook and then NCCL's default. Prints each table; then checks the same runs as JSON: every
# result is correct (no wrong_result, failed or timed_out), the default is measured at every size, and where
# NCCL consulted the tuner (more than one GPU) the forced sizes ran as ring/simple.
# Exits 77 (skip) without a CUDA device. Usage: gpu_bench_check.sh NCCL_AUTOTUNE_BINARY
# Against the stand-in NCCL (tests/standin): AUTOTUNE_GPU_CHECK_SOURCE is the source the results must say
# (default measured) and AUTOTUNE_GPU_CHECK_MAX_BYTES the largest size (default 64M).
set -eu
exe=$1
max=${AUTOTUNE_GPU_CHECK_MAX_BYTES:-64M}
source_wanted=${AUTOTUNE_GPU_CHECK_SOURCE:-measured}
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "no CUDA device: nvidia-smi finds no GPU"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
count=$(nvidia-smi -L | wc -l)
for gpus in 1 "$count"; do
  devs=$(seq -s, 0 $((gpus - 1)))
  for forced in "--algo ring --proto simple" ""; do
    echo "== $gpus GPU(s), bench -c allreduce -b 8 -e $max -f 8 $forced"
    CUDA_VISIBLE_DEVICES=$devs "$exe" bench -c allreduce -b 8 -e "$max" -f 8 $forced
    CUDA_VISIBLE_DEVICES=$devs "$exe" bench -c allreduce -b 8 -e "$max" -f 8 $forced --reps 2 --format json \
      >"$tmp/out.json"
    python3 - "$tmp/out.json" "$gpus" "$forced" "$max" "$source_wanted" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1])); gpus = int(sys.argv[2]); forced = bool(sys.argv[3])
top = int(sys.argv[4][:-1]) << {"K": 10, "M": 20, "G": 30}[sys.argv[4][-1]] if sys.argv[4][-1] in "KMG" else int(sys.argv[4])
sizes = sum(1 for k in range(40) if 8 * 8**k <= top)
assert doc["runner"]["kind"] == "nccl" and doc["runner"]["ranks"] == gpus, doc["runner"]
assert doc["source"] == sys.argv[5], f'source {doc["source"]}, expected {sys.argv[5]}'
results = doc["results"]
assert len(results) == 2 * sizes, f"{len(results)} halves, expected {sizes} sizes out-of-place and in-place"
assert [r["half"] for r in results[:2]] == ["out_of_place", "in_place"], results[:2]
for r in results:
    where = f'{gpus} GPU(s), {r["bytes"]} B {r["half"]}, {r["candidate"]}'
    assert r["outcome"] in ("ok", "unsupported"), f'{where}: {r["outcome"]} {r.get("detail", "")}'
    assert r["wrong"] == 0, where
    if not forced:
        assert r["outcome"] == "ok" and r["time_us"] > 0, f'{where}: the default must always measure'
    elif gpus > 1:
        assert r["outcome"] == "ok", f'{where}: ring/simple must run on {gpus} GPUs: {r.get("detail", "")}'
        assert (r.get("algorithm"), r.get("protocol")) == ("ring", "simple"), f'{where}: NCCL used {r}'
print(f"OK: {gpus} GPU(s), {'ring/simple' if forced else 'default'}: {len(results) // 2} sizes, both halves correct")
PY
  done
done
