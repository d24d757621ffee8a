#!/usr/bin/env bash
# The stand-in's faults (NCCL_STANDIN_FAULT_*) against the real runner under mpirun, two simulated nodes:
#   init     rank 1's communicator creation fails: every rank ends with that reason, promptly, never a hang
#   init-one the same with one process driving 8 GPUs (ncclCommInitAll)
#   hang     Tree/LL never completes: recorded timed_out, the watchdog aborts, the communicator is rebuilt and
#            the calibration goes on to a profile without it
#   wrong    Ring/Simple returns wrong data: the health gate refuses (NCCL's default corrupts); past it, each
#            candidate recorded wrong_result, never a rule
#   async    an asynchronous error after 100 operations: that measurement failed, the next ones succeed
#   slow     rank 1's part takes 3 times as long: every collective is 3 times slower (the slowest rank decides)
# In every calibration each rank takes the same steps (it finishes: a disagreement would hang MPI) and every
# planned measurement is in the journal. Usage: faults_check.sh BUILD_DIR KIND
. "$(dirname "$0")/lib.sh"
kind=$2
[ "$kind" = init-one ] || need_mpirun
if [ "$kind" = init-one ]; then use_standin; else use_standin --ranks-per-node 1 --nodes 2; fi
store=$work/store
# A watchdog of 2 s (scale 0.2): short enough that a hang costs little, long enough that on a machine loaded
# many times over its cores (0.05 was seen to time out every candidate there) only the hang times out.
tune=(tune --store "$store" --collectives allreduce --min-bytes 64K --max-bytes 256K --strategy exhaustive --reps 2
  --check-bytes 1M --watchdog-scale 0.2 --launcher "mpirun -np 2")

# tune under the fault, then the journal's measurements as "algo/proto outcome detail" lines
calibrate() {
  env "$@" "$exe" "${tune[@]}" >"$work/tune.txt" 2>&1 || {
    rc=$?
    cat "$work/tune.txt" "$store"/*.parts/*.log
    fail "tune exited with $rc under $*"
  }
  cat "$work/tune.txt"
  grep -Eq '^source *= *"standin"' "$store"/*.toml || fail "no stand-in profile"
  python3 - "$store"/*.journal.jsonl >"$work/outcomes.txt" <<'PY'
import json, sys
records = [json.loads(l) for l in open(sys.argv[1])]
header = next(r for r in records if r.get("type") == "header")
m = [r for r in records if r.get("type") == "measurement"]
sizes = {r["bytes"] for r in m}
# Every planned measurement is there: each size has the default and every candidate of the first size.
per_size = {b: sum(1 for r in m if r["bytes"] == b) for b in sizes}
assert len(set(per_size.values())) == 1 and len(sizes) == 3, f"measurements per size: {per_size}"
for r in m:
    c = r["candidate"]
    name = f'{c.get("algorithm") or "default"}/{c.get("protocol") or "default"}'
    print(r["bytes"], name, r["outcome"], r.get("detail", "").replace("\n", " "))
PY
  cat "$work/outcomes.txt"
}

case $kind in
  init | init-one)
    start=$(date +%s)
    if [ "$kind" = init ]; then
      NCCL_STANDIN_FAULT_INIT_RANK=1 mpi -np 2 "$exe" bench -c allreduce -b 64K -e 64K --reps 1 >"$work/out" 2>&1
    else
      NCCL_STANDIN_FAULT_INIT_RANK=3 "$exe" bench -c allreduce -b 64K -e 64K --reps 1 >"$work/out" 2>&1
    fi
    rc=$?
    took=$(($(date +%s) - start))
    cat "$work/out"
    [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "exit status $rc: expected a failure, not success or a timeout"
    [ "$took" -le 30 ] || fail "took $took s to fail"
    want=$([ "$kind" = init ] && echo 2 || echo 1)
    n=$(grep -c "error: .*cannot create the NCCL communicator: .*injected fault: communicator creation fails on rank [13]" "$work/out")
    [ "$n" -eq "$want" ] || fail "$n of $want process(es) ended with the failing rank's reason"
    echo "OK: creation failed on a rank; $want process(es) ended with its reason in $took s" ;;
  hang)
    calibrate NCCL_STANDIN_FAULT_HANG=tree/ll
    [ "$(grep -c ' tree/ll timed_out .*communicator aborted' "$work/outcomes.txt")" -eq 3 ] ||
      fail "Tree/LL was not timed out at every size"
    # The candidate after each hung one ran on a rebuilt communicator.
    grep -A1 ' tree/ll timed_out' "$work/outcomes.txt" | grep -v -e ' tree/ll ' -e '^--' | grep -qv ' ok ' &&
      fail "a measurement after a hang did not succeed"
    grep -q 'algorithm = "tree"' "$store"/*.toml && grep -A1 'algorithm = "tree"' "$store"/*.toml | grep -q '"ll"' &&
      fail "a timed-out candidate became a rule"
    echo "OK: the hung candidate timed out at every size, the calibration went on" ;;
  wrong)
    # NCCL's own choice for check's large all-reduce is Ring/Simple: the health gate meets the corruption
    # first and refuses to calibrate, naming it. Past the gate, the calibration must record it per candidate.
    NCCL_STANDIN_FAULT_WRONG=ring/simple "$exe" "${tune[@]/#1M/16M}" >"$work/gate.txt" 2>&1
    rc=$?
    cat "$work/gate.txt"
    [ "$rc" -eq 2 ] && grep -q 'could not measure on this job: wrong_result' "$work/gate.txt" ||
      fail "the health gate let a node that corrupts NCCL's default through (exit $rc)"
    tune+=(--ignore-health)
    calibrate NCCL_STANDIN_FAULT_WRONG=ring/simple
    [ "$(grep -c ' ring/simple wrong_result .*elements wrong' "$work/outcomes.txt")" -eq 3 ] ||
      fail "Ring/Simple was not found wrong at every size"
    python3 -c 'import sys, tomllib; r = tomllib.load(open(sys.argv[1], "rb")).get("rule", []); sys.exit(any((x["algorithm"], x["protocol"]) == ("ring", "simple") for x in r))' "$store"/*.toml ||
      fail "a wrong candidate became a rule"
    echo "OK: the corrupting candidate was recorded wrong at every size and never became a rule" ;;
  async)
    # The error comes after 100 operations of a process: check's own job meets it first (the gate refuses,
    # as the wrong case shows); this case is about one failed measurement inside a calibration.
    tune+=(--ignore-health)
    calibrate NCCL_STANDIN_FAULT_ASYNC_AFTER=100
    [ "$(grep -c ' failed .*injected asynchronous error after 100 operation' "$work/outcomes.txt")" -eq 1 ] ||
      fail "expected exactly one measurement failed by the asynchronous error"
    [ "$(grep -c ' failed ' "$work/outcomes.txt")" -eq 1 ] || fail "more than the one measurement failed"
    echo "OK: one measurement failed with the asynchronous error, every later one succeeded" ;;
  slow)
    bench=(bench -c allreduce -b 64K -e 1M -f 4 --reps 2 --format json)
    mpi -np 2 "$exe" "${bench[@]}" >"$work/fast.json" || fail "bench exited with $?"
    NCCL_STANDIN_FAULT_SLOW_RANK=1 NCCL_STANDIN_FAULT_SLOW_FACTOR=3 mpi -np 2 "$exe" "${bench[@]}" >"$work/slow.json" ||
      fail "bench under the slow rank exited with $?"
    python3 - "$work" <<'PY'
import json, sys
fast = json.load(open(f"{sys.argv[1]}/fast.json"))["results"]
slow = json.load(open(f"{sys.argv[1]}/slow.json"))["results"]
for f, s in zip(fast, slow):
    ratio = s["time_us"] / f["time_us"]
    assert 2.5 < ratio < 3.5, f'{f["bytes"]} B: {s["time_us"]} us with rank 1 slow vs {f["time_us"]} us: ratio {ratio:.2f}'
print(f"OK: with rank 1 three times slower every size took about 3x ({len(fast)} sizes)")
PY
    ;;
  *) fail "unknown fault kind $kind" ;;
esac
