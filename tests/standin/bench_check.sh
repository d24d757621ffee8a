#!/usr/bin/env bash
# `nccl-autotune bench` without --simulate on the stand-in: the real NCCL runner, in one process driving the
# 8 GPUs of the h100-8x example (RANKS 0) or under mpirun with RANKS processes, RANKS_PER_NODE to a simulated
# node. Checks that the results say stand-in, every result checked and right, the node layout
# the runner learnt (from MPI, as on a cluster), and a forced candidate visible in what the stand-in NCCL
# chose (its NCCL_DEBUG=INFO TUNING lines) and in what the plugin's hook saw; the timed loops captured as CUDA
# graphs (--cuda-graph) run the same work in the same virtual time.
# Usage: bench_check.sh BUILD_DIR RANKS RANKS_PER_NODE
. "$(dirname "$0")/lib.sh"
ranks=$2 per_node=$3
if [ "$ranks" -eq 0 ]; then
  use_standin
  run=("$exe")
  want_ranks=8 want_nodes=1
else
  need_mpirun
  use_standin --ranks-per-node "$per_node" --nodes $(((ranks + per_node - 1) / per_node))
  run=(mpi -np "$ranks" "$exe")
  want_ranks=$ranks want_nodes=$(((ranks + per_node - 1) / per_node))
fi
sizes=(-b 1K -e 256K -f 16 --reps 2)

"${run[@]}" bench -c allreduce,allgather,reducescatter,broadcast,reduce "${sizes[@]}" --format json \
  >"$work/default.json" || fail "bench exited with $?: $(tail -5 "$work/default.json")"
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING NCCL_DEBUG_FILE="$work/nccl.%p.log" \
  "${run[@]}" bench -c allreduce "${sizes[@]}" --algo tree --proto ll --format json >"$work/forced.json" ||
  fail "bench --algo tree --proto ll exited with $?"
cat "$work"/nccl.*.log >"$work/forced.log"
# The timed loops captured as CUDA graphs and replayed: the same work, so the same virtual times and results.
"${run[@]}" bench -c allreduce "${sizes[@]}" --cuda-graph --format json >"$work/graph.json" ||
  fail "bench --cuda-graph exited with $?"

python3 - "$work" "$want_ranks" "$want_nodes" <<'PY'
import json, re, sys
work, ranks, nodes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
doc = json.load(open(f"{work}/default.json"))
runner = doc["runner"]
assert doc["source"] == "standin", f'source {doc["source"]}: must never be "measured" on the stand-in'
assert runner["kind"] == "nccl" and runner["ranks"] == ranks and runner["nodes"] == nodes, runner
assert runner["gpus_per_node"] == ranks // nodes, runner
collectives = {r["collective"] for r in doc["results"]}
assert collectives == {"allreduce", "allgather", "reducescatter", "broadcast", "reduce"}, collectives
for r in doc["results"]:
    where = f'{r["collective"]} {r["bytes"]} B'
    assert r["outcome"] == "ok" and r["wrong"] == 0, f'{where}: {r["outcome"]} {r.get("detail", "")}'
    assert r["time_us"] > 0, where
forced = json.load(open(f"{work}/forced.json"))["results"]
assert forced and all((r["outcome"], r.get("algorithm"), r.get("protocol")) == ("ok", "tree", "ll")
                      for r in forced), f"forced tree/ll: {forced}"
chosen = set(re.findall(r"NCCL INFO AllReduce: (\d+) Bytes -> Algo (\d) proto (\d)", open(f"{work}/forced.log").read()))
forced_bytes = {str(r["bytes"]) for r in forced}
seen = {b for b, a, p in chosen if (a, p) == ("0", "0")}
assert forced_bytes <= seen, f"the stand-in did not choose Tree/LL for {sorted(forced_bytes - seen)}: {sorted(chosen)}"
graph = json.load(open(f"{work}/graph.json"))["results"]
plain = [r for r in doc["results"] if r["collective"] == "allreduce"]
assert len(graph) == len(plain) and all(g["outcome"] == "ok" and g["wrong"] == 0 for g in graph), graph
for g, p in zip(graph, plain):
    assert g["time_us"] == p["time_us"], f'{g["bytes"]} B {g["half"]}: {g["time_us"]} us replayed, {p["time_us"]} us launched'
print(f"OK: {len(doc['results'])} results on {ranks} ranks ({nodes} node(s)), all right; Tree/LL forced at "
      f"{len(forced_bytes)} sizes and chosen by the stand-in")
PY
