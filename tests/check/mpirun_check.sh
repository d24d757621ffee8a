#!/bin/sh
# mpirun -np 4 nccl-autotune check --simulate must give what one process gives: every process computes its
# share of the simulated ranks of every group, and each group's time is combined with MPI (max) as the NCCL
# runner combines real ones, so the same nodes and devices are named from the same figures.
# Usage: mpirun_check.sh NCCL_AUTOTUNE_BINARY
set -u
exe=$1
if ! command -v mpirun >/dev/null 2>&1; then echo "SKIP: mpirun not found"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
args="check --simulate --example h100-8x --nodes 8 --sim-fault node=3,nic=1,rate=0.5 --sim-fault node=5,gpu=2,clock=0.6 --format json"
"$exe" $args >"$tmp/single.json" 2>/dev/null
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
  OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none \
  mpirun -np 4 --oversubscribe "$exe" $args >"$tmp/mpi.json" 2>"$tmp/mpi.err"
python3 - "$tmp/single.json" "$tmp/mpi.json" <<'PY' || { cat "$tmp/mpi.err"; exit 1; }
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
assert a["source"] == b["source"] == "simulated"
assert a["status"] == b["status"] == "block", (a["status"], b["status"])
for p, q in zip(a["passes"], b["passes"]):
    assert p["shape"] == q["shape"] and len(p["group_busbw_gbps"]) == len(q["group_busbw_gbps"]) > 0, p["shape"]
    for x, y in zip(p["group_busbw_gbps"], q["group_busbw_gbps"]):
        assert abs(x - y) <= 1e-9 * abs(x), f"{p['kind']} {p['shape']}: {x} vs {y}"
flagged = lambda j: [(n["node"], f["device"]) for n in j["nodes"] for f in n["findings"]]
assert flagged(a) == flagged(b) == [(3, "mlx5_1"), (5, "GPU2")], (flagged(a), flagged(b))
print(f"OK: {len(a['passes'])} passes agree between 1 process and mpirun -np 4")
PY
