#!/bin/sh
# mpirun -np 4 nccl-autotune bench --simulate must agree with the single-process result: every process
# computes its share of the simulated ranks and the timings are combined with MPI (max, and sum for the mean).
# Usage: mpirun_bench_check.sh NCCL_AUTOTUNE_BINARY
set -eu
exe=$1
if ! command -v mpirun >/dev/null 2>&1; then echo "SKIP: mpirun not found"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
args="bench --simulate --example h100-8x --nodes 2 -c allreduce,allgather -b 8 -e 64M -f 4 --seed 5 --format json"
"$exe" $args >"$tmp/single.json"
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
  OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none \
  mpirun -np 4 --oversubscribe "$exe" $args >"$tmp/mpi.json"
python3 - "$tmp/single.json" "$tmp/mpi.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
assert a["source"] == b["source"] == "simulated", "both runs must be labelled simulated"
ra, rb = a["results"], b["results"]
assert len(ra) == len(rb) > 0, f"{len(ra)} results alone, {len(rb)} under mpirun"
for x, y in zip(ra, rb):
    key = (x["collective"], x["bytes"])
    assert key == (y["collective"], y["bytes"]) and x["outcome"] == y["outcome"], key
    assert x["times_us"] == y["times_us"], f"{key}: max over ranks differs: {x['times_us']} vs {y['times_us']}"
    for p, q in zip(x["mean_times_us"], y["mean_times_us"]):
        assert abs(p - q) <= 1e-9 * abs(p), f"{key}: mean differs {p} vs {q}"
print(f"OK: {len(ra)} results agree between 1 process and mpirun -np 4")
PY
