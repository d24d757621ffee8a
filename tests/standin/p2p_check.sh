#!/usr/bin/env bash
# `nccl-autotune bench` of the point-to-point operations (alltoall, sendrecv, gather, scatter) without
# --simulate on the stand-in, under mpirun with RANKS processes, RANKS_PER_NODE to a simulated node: the real
# NCCL runner through the stand-in's ncclAlltoAll, ncclGather, ncclScatter and grouped ncclSend/ncclRecv.
# Checks that every result is checked and right (the runner compares the data as nccl-tests does), that
# busbw follows nccl-tests' definitions (alltoall, gather, scatter: algbw x (n-1)/n; sendrecv: algbw), that
# the times are the simulator's point-to-point model (traffic across nodes costs more than inside one), that
# the table says stand-in, never measured, and that `check` runs its all-to-all and send/recv ring baselines
# (2 nodes and more) through the same path.
# Usage: p2p_check.sh BUILD_DIR RANKS RANKS_PER_NODE
. "$(dirname "$0")/lib.sh"
ranks=$2 per_node=$3
nodes=$(((ranks + per_node - 1) / per_node))
need_mpirun
use_standin --ranks-per-node "$per_node" --nodes "$nodes"
ops=alltoall,sendrecv,gather,scatter
sizes=(-b 1K -e 1M -f 32 --reps 2)

mpi -np "$ranks" "$exe" bench -c "$ops" "${sizes[@]}" --format json >"$work/p2p.json" ||
  fail "bench exited with $?: $(tail -5 "$work/p2p.json")"
mpi -np "$ranks" "$exe" bench -c "$ops" -b 1K -e 1K >"$work/p2p.txt" || fail "bench (table) exited with $?"
# check's point-to-point baselines through the real runner: the whole job's all-to-all, a ring per rail.
mpi -np "$ranks" "$exe" check --bytes 1M --format json >"$work/check.json" 2>"$work/check.err" ||
  fail "check exited with $?: $(tail -5 "$work/check.err")"
# The same ranks on one node: nothing crosses the network.
use_standin --ranks-per-node "$ranks" --nodes 1
mpi -np "$ranks" "$exe" bench -c alltoall -b 1M -e 1M --reps 2 --format json >"$work/one_node.json" ||
  fail "bench on one node exited with $?"

python3 - "$work" "$ranks" "$nodes" <<'PY'
import json, re, sys
work, ranks, nodes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
doc = json.load(open(f"{work}/p2p.json"))
runner = doc["runner"]
assert doc["source"] == "standin", f'source {doc["source"]}: must never be "measured" on the stand-in'
assert runner["kind"] == "nccl" and runner["ranks"] == ranks and runner["nodes"] == nodes, runner
ops = {r["collective"] for r in doc["results"]}
assert ops == {"alltoall", "sendrecv", "gather", "scatter"}, ops
for r in doc["results"]:
    where = f'{r["collective"]} {r["bytes"]} B {r["half"]}'
    assert r["outcome"] == "ok" and r["wrong"] == 0, f'{where}: {r["outcome"]} {r.get("detail", "")}'
    assert r["time_us"] > 0, where
    factor = 1.0 if r["collective"] == "sendrecv" else (ranks - 1) / ranks
    assert abs(r["busbw_gbps"] - r["algbw_gbps"] * factor) <= 1e-9 * max(1.0, r["algbw_gbps"]), \
        f'{where}: busbw {r["busbw_gbps"]} is not algbw {r["algbw_gbps"]} x {factor}'
    assert abs(r["algbw_gbps"] - r["bytes"] / r["time_us"] / 1e3) <= 1e-6 * r["algbw_gbps"], where
# The model's shape: across nodes the network paces alltoall, so it is slower than on one node.
one = {(r["bytes"], r["half"]): r["time_us"] for r in json.load(open(f"{work}/one_node.json"))["results"]}
a2a = [r for r in doc["results"] if r["collective"] == "alltoall"]
largest = max(a2a, key=lambda r: r["bytes"])
assert largest["time_us"] > one[(largest["bytes"], largest["half"])], \
    f'alltoall {largest["bytes"]} B: {largest["time_us"]} us on {nodes} nodes, not slower than on one'
check = json.load(open(f"{work}/check.json"))
assert check["source"] == "standin" and check["status"] == "ok", (check["source"], check["status"])
kinds = {p["kind"]: p for p in check["passes"]}
assert {"alltoall", "rings"} <= set(kinds), sorted(kinds)
assert len(kinds["alltoall"]["group_busbw_gbps"]) == 1 and check["alltoall_busbw_gbps"] > 0, kinds["alltoall"]
assert len(kinds["rings"]["group_busbw_gbps"]) == ranks // nodes, kinds["rings"]
assert all(not p.get("error") for p in check["passes"]), check["passes"]
assert all(v > 0 for n in check["nodes"] for v in n["ring_busbw_gbps"]), [n["ring_busbw_gbps"] for n in check["nodes"]]
table = open(f"{work}/p2p.txt").read()
assert "stand-in" in table, "the table does not say stand-in"
assert not re.search(r"\bmeasured\b", table, re.I), "the table says measured"
for name in ("alltoall_perf", "sendrecv_perf", "gather_perf", "scatter_perf"):
    assert f"Collective test starting: {name}" in table, f"no {name} in the table"
print(f"OK: {len(doc['results'])} point-to-point results on {ranks} ranks ({nodes} node(s)), all right, "
      f"busbw as nccl-tests defines it, labelled stand-in")
PY
