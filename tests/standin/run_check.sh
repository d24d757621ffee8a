#!/usr/bin/env bash
# Jobs (tests/standin/tools/standin_job.cpp) on two simulated nodes whose ranks may get different profiles,
# one rule saying Ring/LL and the other Tree/LL for the same AllReduce:
#  - `nccl-autotune run --profile P` on both ranks: each rank's plugin logs its INFO line, the stand-in runs
#    the rule's choice;
#  - `nccl-autotune run` given P on one rank and Q on the other: the launcher's job pin gives both the same
#    profile, and the job runs;
#  - the plugin given P and Q by hand (the environment, no launcher): real NCCL would hang or corrupt; the
#    stand-in fails that collective on every rank naming each side's choice, and the job ends loudly on every
#    rank, promptly.
# Usage: run_check.sh BUILD_DIR PLUGIN
. "$(dirname "$0")/lib.sh"
need_mpirun
use_standin --ranks-per-node 1 --nodes 2
profile() {  # profile FILE ALGORITHM
  cat >"$1" <<TOML
# Hand-written for run_check.sh: one AllReduce rule at 64 KiB on 2 nodes.
schema = 1

[cluster]
name = "standin-run-check"
fingerprint = ""
gpu_model = ""
gpus_per_node = 0
nodes = 2
nics_per_node = 0

[provenance]
created = "2026-01-01T00:00:00Z"
tool_version = "0.1.0"
nccl_version = "2.28.9"
source = "standin"
command = "hand-written test profile"

[env]

[[rule]]
collective = "allreduce"
min_bytes = "64K"
max_bytes = "64K"
algorithm = "$2"
protocol = "ll"
channels = 0
TOML
}
profile "$work/ring.toml" ring
profile "$work/tree.toml" tree
job_args=(-- "$job" --sizes 64K --iters 5)
applied="TUNER/Autotune: profile [^ ]+\.toml \(TOML[^)]*source standin[^)]*\): 1 of 1 rules apply to 2x1 \(2 ranks\)"

NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING NCCL_DEBUG_FILE="$work/same.%p.log" \
  mpi -np 2 "$exe" run --profile "$work/ring.toml" "${job_args[@]}" >"$work/same.txt" 2>&1 ||
  { cat "$work/same.txt"; fail "the job with one profile exited with $?"; }
cat "$work/same.txt"
n=$(cat "$work"/same.*.log | grep -Ec "$applied")
[ "$n" -eq 2 ] || fail "$n of 2 ranks logged the plugin's INFO line"
cat "$work"/same.*.log | grep -q "AllReduce: 65536 Bytes -> Algo 1 proto 0" || fail "the stand-in did not choose the rule's Ring/LL"

NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING NCCL_DEBUG_FILE="$work/pinned.%p.log" \
  mpi -np 1 "$exe" run --profile "$work/ring.toml" "${job_args[@]}" : \
  -np 1 "$exe" run --profile "$work/tree.toml" "${job_args[@]}" >"$work/pinned.txt" 2>&1 ||
  { cat "$work/pinned.txt"; fail "the job whose ranks were given two profiles through run exited with $?"; }
cat "$work/pinned.txt"
used=$(cat "$work"/pinned.*.log | grep -Eo "TUNER/Autotune: profile [^ ]+\.toml" | sort -u | wc -l)
[ "$used" -eq 1 ] || fail "the ranks used $used different profiles under one job pin"

start=$(date +%s)
# Every rank runs to its own end (mpirun would otherwise kill the other rank when the first one fails).
OMPI_MCA_orte_abort_on_non_zero_status=0 NCCL_TUNER_PLUGIN=$2 \
  mpi -np 1 -x NCCL_AUTOTUNE_PROFILE="$work/ring.toml" "$job" --sizes 64K --iters 5 : \
  -np 1 -x NCCL_AUTOTUNE_PROFILE="$work/tree.toml" "$job" --sizes 64K --iters 5 >"$work/split.txt" 2>&1
rc=$?
took=$(($(date +%s) - start))
cat "$work/split.txt"
[ "$rc" -ne 124 ] || fail "the job timed out instead of failing"
grep -q "job total" "$work/split.txt" && fail "the job with two profiles reported success"
[ "$took" -le 30 ] || fail "it took $took s to fail"
for r in 0 1; do
  # The collective, or the next call on its communicator, fails.
  grep -q "job failed (rank $r): .*invalid usage.*ranks disagree: rank 0 ring/ll, rank 1 tree/ll" "$work/split.txt" ||
    fail "rank $r did not fail with the disagreement"
done
echo "OK: one profile: both ranks' plugins applied Ring/LL; two through run: one pinned for the job; two by hand:"\
  "both ranks failed in $took s naming each side's choice"
