#!/usr/bin/env bash
# `nccl-autotune tune` on a real Slurm cluster and the stand-in NCCL (two nodes of two GPUs each).
#   salloc:   inside `salloc -N 2 --ntasks-per-node 2 --gpus-per-node 2`, tune chooses srun itself: the health
#             check and every worker job (one per process-wide setting) are steps of that allocation, each
#             with 4 tasks, local ranks 0 and 1 on each of the two nodes; the profile says standin.
#   launcher: `tune --launcher "srun -N 2 --ntasks-per-node 2"` from outside any allocation: each of those
#             jobs is an allocation of its own with that layout.
#   resume:   tune as an sbatch job, cancelled (scancel) while its second worker job runs: tune says it was
#             interrupted, writes no profile, and its journal holds only whole records, every measurement of
#             its parts; `--resume` in a new allocation (salloc) measures only what is left and ends with
#             the rules and [env] of an uninterrupted calibration.
#   side:     inside `salloc -N 4 --ntasks-per-node 2`, the default shapes: the round of 2x1 and 2x2 runs side
#             by side, each group a step of its own on its own nodes (2x1 on n1-n2 with one task each, 2x2
#             on n3-n4 with two), at the same time; the journal keeps each group's node range.
# Usage: tune_check.sh BUILD_DIR salloc|launcher|resume|side
. "$(dirname "$0")/lib.sh"
use_standin
record_tasks
# The whole job's shape and two process-wide settings (NCCL's defaults, NCCL_CROSS_NIC=1): two worker jobs,
# of about 5 s each at one size. (calibration MAX_BYTES sets the array.)
calibration() {
  tune=("$exe" tune --name slurmcal --collectives allreduce --min-bytes 256K --max-bytes "$1" --shapes 2x2
    --strategy exhaustive --reps 2 --check-bytes 1M --cross-nic 1)
}
calibration 256K
store=(--store "$NCCL_AUTOTUNE_STORE")
# (-w: Slurm may take n3 and n4 while n1 and n2 complete the last job; the launcher case takes what it gets.)
alloc=(-N 2 -w n1,n2 --ntasks-per-node 2 --gpus-per-node 2)
layout="4 n1:0,1 n2:0,1"

# The profile tune wrote: it exists, validates, says standin and has a rule.
the_profile() {
  local p
  p=$(ls "$1"/slurmcal*.toml 2>/dev/null | head -n 1)
  [ -n "$p" ] || fail "no profile in $1: $(ls "$1")"
  grep -Eq '^source *= *"standin"' "$p" || fail "$p does not say source = \"standin\""
  "$exe" profile validate "$p" >/dev/null || fail "$p does not validate"
  grep -q '^\[\[rule\]\]' "$p" || fail "$p has no rule"
  echo "$p"
}

# The worker jobs the calibration ran: its journal parts.
jobs_run() { ls "$1"/slurmcal*.journal.parts/job*.jsonl 2>/dev/null | wc -l; }

salloc_case() {
  salloc "${alloc[@]}" "${tune[@]}" "${store[@]}" >tune.txt 2>&1 || { rc=$?; cat tune.txt; fail "tune in salloc exited with $rc"; }
  cat tune.txt
  local job
  job=$(sed -n 's/.*Slurm allocation \([0-9]*\) detected srun --ntasks-per-node 2 -N 2.*/\1/p' tune.txt | head -n 1)
  [ -n "$job" ] || fail "tune did not choose 'srun --ntasks-per-node 2 -N 2' for the allocation"
  the_profile "$NCCL_AUTOTUNE_STORE" >/dev/null
  local n
  n=$(jobs_run "$NCCL_AUTOTUNE_STORE")
  [ "$n" = 2 ] || fail "$n worker jobs, expected 2 (NCCL's defaults and NCCL_CROSS_NIC=1)"
  steps >steps.txt
  cat steps.txt
  # The health check, then one step per worker job, all in the allocation, each with the layout; the second
  # job's setting in every one of its tasks (srun exports tune's environment).
  [ "$(cat steps.txt)" = "$(printf '%s\n' "$job.0 $layout" "$job.1 $layout" "$job.2 $layout NCCL_CROSS_NIC=1")" ] ||
    fail "the steps are not the check and 2 worker jobs of allocation $job with 2 tasks on each of 2 nodes (the second with NCCL_CROSS_NIC=1)"
  echo "OK: in salloc -N 2 --gpus-per-node 2, tune ran check and 2 worker jobs as steps $job.0-2 ($layout), NCCL_CROSS_NIC=1 in the second's tasks"
}

launcher_case() {
  "${tune[@]}" "${store[@]}" --launcher "srun -N 2 --ntasks-per-node 2" >tune.txt 2>&1 ||
    { rc=$?; cat tune.txt; fail "tune exited with $rc"; }
  cat tune.txt
  grep -q "jobs run: --launcher srun -N 2 --ntasks-per-node 2" tune.txt || fail "tune does not say the launcher"
  the_profile "$NCCL_AUTOTUNE_STORE" >/dev/null
  [ "$(jobs_run "$NCCL_AUTOTUNE_STORE")" = 2 ] || fail "not 2 worker jobs"
  steps >steps.txt
  cat steps.txt
  # Three allocations (check, two workers), one step each, the last with the second job's setting.
  # (Any two nodes: each allocation takes the ones Slurm has free.)
  [ "$(awk '{ $1 = substr($1, index($1, ".")); print }' steps.txt | sed -E 's/ n[0-9]+:/ n?:/g' | tr '\n' '|')" = \
    "$(printf '.0 4 n?:0,1 n?:0,1%s|' '' '' ' NCCL_CROSS_NIC=1')" ] ||
    fail "not three allocations of one step each with 2 tasks on each of 2 nodes (the last with NCCL_CROSS_NIC=1)"
  [ "$(cut -d. -f1 steps.txt | sort -u | wc -l)" = 3 ] || fail "the steps are not in three allocations"
  echo "OK: tune --launcher \"srun -N 2 --ntasks-per-node 2\" ran check and 2 worker jobs as 3 allocations ($layout)"
}

# Rules and [env] of a profile, as comparable text.
decisions() {
  python3 -c 'import sys, tomllib, json
p = tomllib.load(open(sys.argv[1], "rb"))
print(json.dumps({"env": p.get("env", {}), "rule": p.get("rule", [])}, sort_keys=True, indent=1))' "$1"
}

# Every line of a JSONL file is one whole JSON record; prints how many are measurements. With "part", a torn
# last line (a worker killed mid-write) is allowed and not counted, as the merge leaves it out.
whole_records() {
  python3 -c 'import json, sys
lines = open(sys.argv[1]).read().split("\n")
last = lines.pop()  # after the last line feed: empty unless torn
assert last == "" or sys.argv[2] == "part", f"{sys.argv[1]}: a torn last line: {last[:80]}"
n = 0
for i, line in enumerate(lines, 1):
    n += json.loads(line).get("type") == "measurement"
print(n)' "$1" "${2:-}" || fail "$1 holds a line that is not a whole record"
}

resume_case() {
  # Two sizes, so that the second job is cancelled between the batches it writes (one per size); the
  # health check is not what is tested here: left out, for time.
  calibration 512K
  tune+=(--ignore-health)
  local ref=$work/reference
  salloc "${alloc[@]}" "${tune[@]}" --store "$ref" >reference.txt 2>&1 ||
    { rc=$?; cat reference.txt; fail "the reference calibration exited with $rc"; }
  decisions "$(the_profile "$ref")" >reference.json
  cat >job.sh <<EOF
#!/bin/bash
exec $(printf '%q ' "${tune[@]}" "${store[@]}")
EOF
  chmod +x job.sh
  local job parts=$NCCL_AUTOTUNE_STORE/slurmcal-nccl2.28.journal.parts  # (the stand-in is NCCL 2.28.9)
  job=$(sbatch --parsable "${alloc[@]}" -o tune.out job.sh) || fail "sbatch: $job"
  # Cancelled once the second worker job has measured something.
  for _ in $(seq 1800); do
    grep -qs '"type":"measurement"' "$parts/job1.jsonl" && break
    sleep 0.1
  done
  grep -qs '"type":"measurement"' "$parts/job1.jsonl" || { cat tune.out; fail "the second worker job measured nothing in 180 s"; }
  scancel "$job"
  for _ in $(seq 300); do [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break; sleep 0.1; done
  [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] || fail "job $job still there 30 s after scancel"
  cat tune.out
  grep -q "interrupted by" tune.out || fail "tune did not say it was interrupted"
  [ ! -e "$(ls "$NCCL_AUTOTUNE_STORE"/slurmcal*.toml 2>/dev/null | head -n 1)" ] || fail "an interrupted calibration wrote a profile"
  local journal in_parts=0 n
  journal=$(ls "$NCCL_AUTOTUNE_STORE"/slurmcal*.journal.jsonl) || fail "no journal after scancel"
  for f in "$parts"/job*.jsonl; do
    n=$(whole_records "$f" part) || exit 1
    in_parts=$((in_parts + n))
  done
  n=$(whole_records "$journal") || exit 1
  [ "$n" -gt 0 ] && [ "$n" = "$in_parts" ] || fail "the journal holds $n measurements, its parts $in_parts"
  echo "after scancel: $n measurements in the journal and its parts"
  salloc "${alloc[@]}" "${tune[@]}" "${store[@]}" --resume >resume.txt 2>&1 ||
    { rc=$?; cat resume.txt; fail "tune --resume exited with $rc"; }
  cat resume.txt
  grep -q "already finished" resume.txt || fail "--resume ran the first worker job again"
  grep -q "^measurements: [1-9][0-9]* made, $n from the journal$" resume.txt ||
    fail "--resume did not take the journal's $n measurements and measure the rest"
  decisions "$(the_profile "$NCCL_AUTOTUNE_STORE")" >resumed.json
  diff reference.json resumed.json || fail "the resumed calibration's rules and [env] differ from the uninterrupted one's"
  echo "OK: scancel of job $job left a whole journal ($n measurements); --resume in a new allocation gave the uninterrupted calibration's profile"
}

side_case() {
  salloc -N 4 -w n1,n2,n3,n4 --ntasks-per-node 2 --gpus-per-node 2 "$exe" tune --name slurmcal --collectives allreduce \
    --min-bytes 256K --max-bytes 256K --strategy exhaustive --reps 2 --check-bytes 1M --cross-nic 1 "${store[@]}" \
    >tune.txt 2>&1 || { rc=$?; cat tune.txt; fail "tune in salloc -N 4 exited with $rc"; }
  cat tune.txt
  grep -q "side by side, sharing the fabric, round 1: 2x1 (nodes 0-1), 2x2 (nodes 2-3)" tune.txt ||
    fail "tune did not plan 2x1 and 2x2 side by side"
  grep -q "failed" tune.txt && fail "a group or a job failed"
  the_profile "$NCCL_AUTOTUNE_STORE" >/dev/null
  steps >steps.txt
  cat steps.txt
  # Per job: the 2x1 group on n1-n2 (a task each), the 2x2 group on n3-n4 (two each), besides the job's own.
  [ "$(grep -cE '^[0-9]+\.[0-9]+ 2 n1:0 n2:0( |$)' steps.txt)" = 2 ] || fail "not two 2x1 group steps on n1 and n2"
  [ "$(grep -cE '^[0-9]+\.[0-9]+ 4 n3:0,1 n4:0,1( |$)' steps.txt)" = 2 ] || fail "not two 2x2 group steps on n3 and n4"
  python3 - "$NCCL_AUTOTUNE_STORE"/slurmcal*.journal.jsonl <<'PY' || fail "the journal's node ranges"
import json, sys
m = [json.loads(l) for l in open(sys.argv[1]) if '"measurement"' in l]
used = {(r["scale"]["nodes"], r["scale"]["ranks"], r.get("nodes_used", "")) for r in m if not r.get("measured_under")}
assert (2, 2, "0-1") in used and (2, 4, "2-3") in used, used
assert all(u == "" for n, k, u in used if (n, k) not in ((2, 2), (2, 4))), used
PY
  echo "OK: in salloc -N 4, 2x1 (n1-n2) and 2x2 (n3-n4) ran side by side as steps of their own, per job"
}

case "${2:-}" in
  salloc) salloc_case ;;
  side) side_case ;;
  launcher) launcher_case ;;
  resume) resume_case ;;
  *) fail "usage: tune_check.sh BUILD_DIR salloc|launcher|resume|side" ;;
esac
