#!/usr/bin/env bash
# `tune --dry-run` without --simulate on the stand-in: under mpirun on two simulated nodes of two ranks each it
# plans the job it runs in (2 nodes x 2 ranks, from mpirun's placement) and, as an orchestrator, a recorded
# node at --nodes 4; it prints the plan's shapes, totals and rounds, and measures and writes nothing.
# Usage: plan_check.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
need_mpirun
use_standin --ranks-per-node 2 --nodes 2
store=$work/store
mpi -np 4 "$exe" tune --dry-run --store "$store" >"$work/plan.txt" 2>&1 || {
  cat "$work/plan.txt"
  fail "tune --dry-run under mpirun exited with $?"
}
cat "$work/plan.txt"
grep -q "planned for 2 node(s) (this job's processes) of 2 GPUs (this job's ranks per node)" "$work/plan.txt" ||
  fail "the plan does not say it is for this job's 2 nodes x 2"
for shape in 1x2 2x1 2x2; do grep -q "^$shape " "$work/plan.txt" || fail "no row for $shape"; done
[ "$(grep -c '^total: ' "$work/plan.txt")" = 1 ] || fail "expected the plan once (from rank 0), found otherwise"
grep -q "round 1 (" "$work/plan.txt" || fail "no rounds"
"$exe" probe --example h100-8x --format json >"$work/node.json" || fail "probe --example"
"$exe" tune --dry-run --topology "$work/node.json" --nodes 4 --store "$store" >"$work/plan4.txt" 2>&1 || {
  cat "$work/plan4.txt"
  fail "tune --dry-run --nodes 4 exited with $?"
}
grep -q "^4x8 " "$work/plan4.txt" || fail "no 4x8 row for --nodes 4"
[ ! -e "$store" ] || fail "a dry run wrote into the store"
echo "OK: the plan on the stand-in, under mpirun and for a recorded node"
