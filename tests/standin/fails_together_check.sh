#!/usr/bin/env bash
# The two hang-class faults found in the NCCL runner and `tune` (the architecture issue), on the stand-in
# under mpirun, two simulated nodes; regression tests, each would leave one rank waiting in MPI before the
# fixes:
#   journal   rank 0's journal write fails (RLIMIT_FSIZE, the full disk of the test): every process stops
#             with rank 0's reason, what was journaled stays, and `tune --resume` continues from it to the
#             full count
#   step      a step fails with an error that is not the candidate's outcome on one rank only (rank 1's
#             communicator cannot be rebuilt after a hung candidate; rank 0's can): every process ends the
#             calibration with rank 1's reason, promptly
# Usage: fails_together_check.sh BUILD_DIR journal|step
. "$(dirname "$0")/lib.sh"
need_mpirun
use_standin --ranks-per-node 1 --nodes 2
command -v prlimit >/dev/null 2>&1 || { echo "SKIP: prlimit not found (util-linux)"; exit 77; }
kind=$2
store=$work/store
mkdir -p "$store"
tune=(tune --store "$store" --name together --collectives allreduce --min-bytes 1K --max-bytes 64K
  --strategy exhaustive --reps 2 --check-bytes 1M)
start=$(date +%s)
case $kind in
  journal)
    # Small staging, so that the stand-in's shared memory fits under the limit the journal does not.
    export NCCL_STANDIN_STAGE_BYTES=4096
    # Rank 0 alone writes the journal: only its process gets the limit (SIGXFSZ ignored: the write fails).
    mpi -np 1 sh -c 'trap "" XFSZ; exec prlimit --fsize=49152 "$@"' sh "$exe" "${tune[@]}" : \
      -np 1 "$exe" "${tune[@]}" >"$work/out" 2>&1
    ;;
  step)
    NCCL_STANDIN_FAULT_HANG=tree/ll NCCL_STANDIN_FAULT_INIT_RANK=1 NCCL_STANDIN_FAULT_INIT_AFTER=1 \
      mpi -np 2 "$exe" "${tune[@]}" --watchdog-scale 0.05 >"$work/out" 2>&1
    ;;
  *) fail "unknown kind $kind" ;;
esac
rc=$?
took=$(($(date +%s) - start))
cat "$work/out"
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "exit status $rc: expected every rank to fail, not success or a hang"
[ "$took" -le 60 ] || fail "took $took s"
if [ "$kind" = journal ]; then
  reason="error: cannot write journal .*: the calibration stopped on every process; everything journaled before is kept"
else
  reason="error: .*rank 1: cannot create the NCCL communicator: .*injected fault: communicator creation fails on rank 1"
fi
n=$(grep -c "$reason" "$work/out")
[ "$n" -eq 2 ] || fail "$n of 2 processes ended with the failing rank's reason"
if [ "$kind" = journal ]; then
  kept=$(grep -c '"type":"measurement"' "$store"/together-*.journal.jsonl)
  [ "$kept" -gt 0 ] || fail "nothing was kept in the journal"
  unset NCCL_STANDIN_STAGE_BYTES
  mpi -np 2 "$exe" "${tune[@]}" --resume >"$work/resume.out" 2>&1 || { cat "$work/resume.out"; fail "--resume failed"; }
  line=$(grep -E "^measurements: [0-9]+ made, [0-9]+ from the journal" "$work/resume.out")
  made=$(echo "$line" | awk '{print $2}') replayed=$(echo "$line" | awk '{print $4}')
  [ "$replayed" -ge "$kept" ] && [ $((made + replayed)) -eq 105 ] ||
    fail "resume: $line, with $kept measurement(s) kept (105 planned)"
  echo "OK: both processes stopped with rank 0's journal error in $took s; --resume replayed $replayed and measured $made"
else
  echo "OK: both processes ended with rank 1's reason in $took s"
fi
