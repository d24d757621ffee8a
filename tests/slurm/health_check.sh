#!/usr/bin/env bash
# `nccl-autotune check` across a Slurm allocation on the stand-in NCCL: `srun nccl-autotune check` inside
# `salloc -N 2 --ntasks-per-node 2 --gpus-per-node 2` checks both nodes (named as their hosts, n1 and n2,
# two GPUs each) and passes (exit 0, source standin); with one rank of n2 three times slower (the
# stand-in's slow-rank fault, in n2's tasks only) it exits 1 and names n2, and only n2, as blocking.
# Usage: health_check.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
use_standin
record_tasks
# (-w: the nodes the fault and the checks name; Slurm may otherwise take n3 and n4 while n1 and n2 complete
# the last job.)
alloc=(-N 2 -w n1,n2 --ntasks-per-node 2 --gpus-per-node 2)

salloc "${alloc[@]}" srun "$exe" check --bytes 1M --output healthy.json >healthy.txt 2>&1
rc=$?
cat healthy.txt
[ $rc = 0 ] || fail "check across the allocation exited with $rc"
steps >steps.txt
cat steps.txt
[ "$(awk '{ $1 = ""; print }' steps.txt)" = " 4 n1:0,1 n2:0,1" ] || fail "check did not run as one step of 2 tasks on each of 2 nodes"
python3 - healthy.json <<'PY' || fail "the healthy check's JSON: see above"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["source"] == "standin", f"source {r['source']}, expected standin"
assert r["status"] == "ok" and r["gpus_per_node"] == 2, f"status {r['status']}, {r['gpus_per_node']} GPUs per node"
got = [(n["host"], n["status"]) for n in r["nodes"]]
assert got == [("n1", "ok"), ("n2", "ok")], f"nodes {got}, expected n1 and n2 ok"
PY

NCCL_AUTOTUNE_TEST_NODE_EXPORT="n2:NCCL_STANDIN_FAULT_SLOW_RANK=0 n2:NCCL_STANDIN_FAULT_SLOW_FACTOR=3" \
  salloc "${alloc[@]}" srun "$exe" check --bytes 1M --output sick.json >sick.txt 2>&1
rc=$?
cat sick.txt
[ $rc = 1 ] || fail "check with a slow rank on n2 exited with $rc, expected 1"
python3 - sick.json <<'PY' || fail "the sick check's JSON: see above"
import json, sys
r = json.load(open(sys.argv[1]))
got = {n["host"]: n["status"] for n in r["nodes"]}
assert got == {"n1": "ok", "n2": "block"}, f"nodes {got}, expected n2 alone to block"
PY
echo "OK: srun check inside salloc -N 2: both nodes pass healthy; a slow rank on n2 blocks n2 alone (exit 1)"
