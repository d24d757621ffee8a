#!/usr/bin/env bash
# A 3D-parallel job on 4 simulated nodes x 8 GPUs (32 ranks under mpirun, one per GPU) under
# `nccl-autotune run`, with a profile whose rules differ per communicator shape:
#  - tp=8,pp=2,dp=2: the tensor groups (1x8) get the 1x8 rule, the pipeline and data parallel pairs (2x1)
#    the 2x1 rule, on every rank (the stand-in fails any collective whose ranks choose differently);
#  - tp=8,pp=1,dp=4: the data parallel groups of 4x1 get the 4x1 rule, never a whole-node one;
#  - the same job taking the profile from a store that is updated all the while it starts (two versions whose
#    1x8 rules differ): every rank runs one version (one digest in every rank's log) and the job runs;
#  - the same job under a stand-in reporting NCCL 2.27.3: the plugin of every rank refuses the 2.28 profile
#    with one line naming both versions, and every rank runs NCCL's own choices.
# Usage: layout_check.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
need_mpirun
use_standin --ranks-per-node 8 --nodes 4
rule() {  # rule NODES RANKS_PER_NODE ALGORITHM PROTOCOL
  printf '\n[[rule]]\ncollective = "allreduce"\nmin_bytes = "64K"\nmax_bytes = "64K"\nnodes = %s\nranks_per_node = %s\nalgorithm = "%s"\nprotocol = "%s"\nchannels = 0\n' "$@"
}
{
  printf '# Hand-written for layout_check.sh: one AllReduce rule per communicator shape at 64 KiB.\nschema = 1\n\n'
  printf '[cluster]\nname = "standin-layout"\nfingerprint = ""\ngpu_model = ""\ngpus_per_node = 8\nnodes = 4\nnics_per_node = 8\n\n'
  printf '[provenance]\ncreated = "2026-01-01T00:00:00Z"\ntool_version = "0.1.0"\nnccl_version = "2.28.9"\nsource = "standin"\ncommand = "hand-written test profile"\n\n[env]\n'
  rule 1 8 ring ll128
  rule 2 1 tree ll
  rule 4 1 ring simple
  rule 4 8 tree simple
} >"$work/layout.toml"

# run_job NAME PARALLELISM [VAR=VALUE...]: the job under run, every rank's NCCL log kept apart; the profile
# is $which (run's options), by default the file itself
which=(--profile "$work/layout.toml")
run_job() {
  local name=$1 layout=$2
  shift 2
  (
    for v in "$@"; do export "${v?}"; done
    NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING NCCL_DEBUG_FILE="$work/$name.%p.log" \
      mpi -np 32 "$exe" run "${which[@]}" -- "$job" --sizes 64K --iters 2 --parallelism "$layout"
  ) >"$work/$name.txt" 2>&1
  local rc=$?
  [ "$rc" -eq 0 ] || { cat "$work/$name.txt"; fail "the $name job exited with $rc"; }
  grep -q "job total" "$work/$name.txt" || fail "the $name job did not finish"
  grep -h "AllReduce: 65536 Bytes -> Algo" "$work"/$name.*.log >"$work/$name.choices"
}
# expect NAME "RANKS ranks, NODES node(s)" ALGO/PROTO: every call of that shape chose it
expect() {
  local n wrong
  n=$(grep -c "($3, $2)" "$work/$1.choices")
  wrong=$(grep -F "$2)" "$work/$1.choices" | grep -vc "($3, $2)")
  [ "$n" -gt 0 ] || fail "$1: no call on a communicator of $2"
  [ "$wrong" -eq 0 ] || fail "$1: $wrong call(s) on $2 did not choose $3: $(grep -F "$2)" "$work/$1.choices" | grep -v "($3" | head -1)"
  echo "OK: $1: all $n calls on communicators of $2 chose $3"
}
choice() { grep -Eo '\([A-Za-z_]+/[A-Za-z0-9]+, [0-9]+ ranks, [0-9]+ node\(s\)\)' "$work/$1.choices" | sort | uniq -c; }

run_job 3d tp=8,pp=2,dp=2
choice 3d
expect 3d "8 ranks, 1 node(s)" Ring/LL128
expect 3d "2 ranks, 2 node(s)" Tree/LL
[ "$(grep -c "rules apply to 1x8" "$work"/3d.*.log | awk -F: '{s+=$2} END {print s}')" -eq 32 ] ||
  fail "not every rank's plugin named the 1x8 shape for its tensor group"

run_job dp4 tp=8,pp=1,dp=4
choice dp4
expect dp4 "4 ranks, 4 node(s)" Ring/Simple

run_job old tp=8,pp=2,dp=2 NCCL_STANDIN_VERSION=2.27.3
refused=$(grep -l "made for NCCL 2.28.*2.27" "$work"/old.*.log | wc -l)
[ "$refused" -eq 32 ] || fail "$refused of 32 ranks' plugins refused the 2.28 profile under NCCL 2.27.3"
grep -q "(Ring/LL128, 8 ranks" "$work/old.choices" && grep -q "(Tree/LL, 2 ranks" "$work/old.choices" &&
  fail "under NCCL 2.27.3 the 2.28 profile's rules were applied"
echo "OK: under NCCL 2.27.3 every rank refused the 2.28 profile and ran NCCL's own choices, all alike"

# A store updated while the job starts: the launcher pins one version for the job (Open MPI's PMIX_NAMESPACE
# names the job), so no two ranks can read different versions.
export NCCL_AUTOTUNE_STORE=$work/store
sed 's/^algorithm = "ring"$/algorithm = "tree"/; s/^protocol = "ll128"$/protocol = "ll"/' "$work/layout.toml" >"$work/other.toml"
"$exe" profile import "$work/layout.toml" --name standin-layout >/dev/null || fail "profile import"
(
  for i in $(seq 1 400); do
    [ -e "$work/stop" ] && break
    "$exe" profile import "$work/$([ $((i % 2)) -eq 0 ] && echo layout || echo other).toml" --name standin-layout \
      >/dev/null 2>&1 && echo "$i" >>"$work/imports"
  done
) &
updater=$!
which=(--cluster standin-layout)
run_job race tp=8,pp=2,dp=2
touch "$work/stop"
wait "$updater"
versions=$(grep -ho "digest [0-9a-f]\{16\}" "$work"/race.*.log | sort -u | wc -l)
[ "$versions" -eq 1 ] || fail "the ranks of one job ran $versions versions of the profile"
imports=$(wc -l <"$work/imports")
[ "$imports" -ge 4 ] || fail "the store was updated only $imports time(s) while the job ran"
echo "OK: the store changed $imports times between two versions while the job started and ran; all 32 ranks ran one"
