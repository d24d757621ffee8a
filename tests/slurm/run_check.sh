#!/usr/bin/env bash
# `srun ... nccl-autotune run -- CMD` on a real Slurm cluster.
#   profile: srun -N 2 -n 4: every task gets the same profile version (digest, the store's immutable copy),
#            its [env] and the plugin, pinned by the step (<store>/jobs/<job>.<step>.pin); the plugin, loaded in
#            each task as NCCL loads it, reads that version; the job is the process Slurm started (run execs).
#   status:  a task's exit status and a signal that kills it come back through srun; signals reach the job:
#            one sent to srun that srun forwards (SIGUSR1) and one scancel sends to the step (SIGTERM).
#   views:   the two nodes see the store differently (n1 a store whose current version is b, n2 one still at
#            a, as a lagging replica or cache would): each node's tasks alone take their node's version
#            (pins kept in each store), and with one pin directory the nodes share (NCCL_AUTOTUNE_PIN_DIR, as
#            a home directory) all four tasks take the one version the job pinned, read by the plugin in each.
# Usage: run_check.sh BUILD_DIR profile|status|views
. "$(dirname "$0")/lib.sh"
loader=$build/tests/plugins/nccl_like_loader

profile_case() {
  [ -x "$loader" ] || skip "$loader was not built"
  digest=$(publish a)
  [ -n "$digest" ] || fail "no digest for the published profile"
  srun -N 2 -n 4 -w n1,n2 -o "task.%t" "$exe" run --cluster slurmtest -- sh -c \
    'echo "task $SLURM_PROCID on $SLURMD_NODENAME step $SLURM_JOB_ID.$SLURM_STEP_ID pid $$ slurm $SLURM_TASK_PID"
     env | grep "^NCCL_" | sort; "$0"' "$loader" 2>run.err || { cat run.err task.*; fail "srun exited with $?"; }
  cat task.0 run.err
  local want_profile=$NCCL_AUTOTUNE_STORE/versions/slurmtest-nccl2.28-$digest.toml
  local plugin=$build/plugins/libnccl-tuner-autotune.so
  for t in 0 1 2 3; do
    local f=task.$t
    [ -s "$f" ] || fail "task $t wrote nothing"
    [ "$(value_in NCCL_AUTOTUNE_PROFILE_DIGEST "$f")" = "$digest" ] || fail "task $t: digest $(value_in NCCL_AUTOTUNE_PROFILE_DIGEST "$f"), not $digest"
    [ "$(value_in NCCL_AUTOTUNE_PROFILE "$f")" = "$want_profile" ] || fail "task $t: profile $(value_in NCCL_AUTOTUNE_PROFILE "$f")"
    [ "$(value_in NCCL_TUNER_PLUGIN "$f")" = "$plugin" ] || fail "task $t: NCCL_TUNER_PLUGIN $(value_in NCCL_TUNER_PLUGIN "$f")"
    [ "$(value_in NCCL_CROSS_NIC "$f")" = 0 ] || fail "task $t: NCCL_CROSS_NIC"
    [ "$(value_in NCCL_IB_HCA "$f")" = "=mlx5_0:1,mlx5_1:1" ] || fail "task $t: NCCL_IB_HCA"
    [ "$(value_in NCCL_SOCKET_IFNAME "$f")" = "=eth0" ] || fail "task $t: NCCL_SOCKET_IFNAME"
    grep -Eq "^task $t on n[12] step [0-9]+\.0 pid ([0-9]+) slurm \1$" "$f" ||
      fail "task $t: not the process slurmstepd started, or no step: $(head -n 1 "$f")"
    grep -q "TUNER/Autotune: profile $want_profile (TOML, compiled rules, source measured, digest $digest): 1 of 1 rules apply" "$f" ||
      fail "task $t: the plugin did not read version $digest: $(grep TUNER "$f")"
  done
  [ "$(cat task.* | sed -n 's/^task [0-9] on \(n[0-9]\) .*/\1/p' | sort -u | tr '\n' ' ')" = "n1 n2 " ] ||
    fail "the tasks did not run on two nodes"
  local step
  step=$(sed -n 's/^task 0 on n[0-9] step \([0-9.]*\) .*/\1/p' task.0)
  [ "$(ls "$NCCL_AUTOTUNE_STORE/jobs")" = "$step.pin" ] || fail "pins: $(ls "$NCCL_AUTOTUNE_STORE/jobs"), expected $step.pin"
  echo "OK: 4 tasks on 2 nodes, one version ($digest) pinned by step $step, read by the plugin in every task"
}

# wait_for FILE...: until each exists (10 s at most).
wait_for() {
  for _ in $(seq 100); do
    local all=1
    for f in "$@"; do [ -e "$f" ] || all=0; done
    [ $all = 1 ] && return 0
    sleep 0.1
  done
  fail "waited 10 s for $*"
}

status_case() {
  publish a >/dev/null
  srun -N 2 -n 2 "$exe" run --cluster slurmtest -- sh -c 'exit $((SLURM_PROCID * 5 + 2))' 2>/dev/null
  rc=$?
  [ $rc = 7 ] || fail "srun exited with $rc where task 1 exited with 7 (task 0 with 2)"
  srun -N 2 -n 2 "$exe" run --cluster slurmtest -- sh -c '[ "$SLURM_PROCID" = 1 ] && kill -SEGV $$; exit 0' 2>/dev/null
  rc=$?
  [ $rc = 139 ] || fail "srun exited with $rc where task 1 was killed by SIGSEGV (128 + 11)"
  # The job traps signals; each trap writes which process got it: the one slurmstepd started, since run execs.
  # shellcheck disable=SC2016
  local job='trap "echo \$\$ \$SLURM_TASK_PID > usr1.\$SLURM_PROCID" USR1
    trap "echo \$\$ \$SLURM_TASK_PID > term.\$SLURM_PROCID; exit 42" TERM
    echo "$SLURM_JOB_ID.$SLURM_STEP_ID" > ready.$SLURM_PROCID
    while :; do sleep 0.05; done'
  command srun -N 2 -n 2 "$exe" run --cluster slurmtest -- sh -c "$job" 2>signals.err &
  local srun_pid=$!  # srun itself, not timeout (which would take the signal); lib.sh ends it with the test
  background+=($srun_pid)
  wait_for ready.0 ready.1
  kill -USR1 $srun_pid  # srun forwards SIGUSR1 to every task
  wait_for usr1.0 usr1.1
  scancel --signal=TERM "$(cat ready.0)"  # to the step's tasks
  wait_bounded $srun_pid 30
  rc=$?
  cat signals.err
  [ $rc = 42 ] || fail "srun exited with $rc where the tasks' SIGTERM trap exited with 42"
  for t in 0 1; do
    for s in usr1 term; do
      read -r pid slurm_pid <$s.$t
      [ "$pid" = "$slurm_pid" ] || fail "task $t: $s reached pid $pid, the task slurmstepd started is $slurm_pid"
    done
  done
  echo "OK: statuses 7 and 139 through srun; SIGUSR1 through srun and SIGTERM from scancel reached each job"
}

# One step of 4 tasks on 2 nodes under run, each task's store its node's (task_record.sh); prints the step
# and, per task, "<node> <digest>", with the plugin's profile line checked against the digest.
views_step() {
  rm -f task.*
  NCCL_AUTOTUNE_TEST_NODE_STORE=$work/store- srun -N 2 -n 4 -w n1,n2 -o "task.%t" "$exe" run --cluster slurmtest -- sh -c \
    'echo "step $SLURM_JOB_ID.$SLURM_STEP_ID on $SLURMD_NODENAME store $NCCL_AUTOTUNE_STORE"
     env | grep "^NCCL_" | sort; "$0"' "$loader" 2>run.err || { cat run.err task.*; fail "srun exited with $?"; }
  sed -n 's/^step \([0-9.]*\) .*/\1/p' task.0
  for t in 0 1 2 3; do
    local node digest
    node=$(sed -n 's/^step [0-9.]* on \(n[0-9]\) store .*/\1/p' task.$t)
    grep -q "^step [0-9.]* on $node store $work/store-$node$" task.$t || fail "task $t did not get its node's store: $(head -n 1 task.$t)"
    digest=$(value_in NCCL_AUTOTUNE_PROFILE_DIGEST task.$t)
    grep -q "TUNER/Autotune: profile [^ ]*-$digest.toml (TOML, compiled rules, source measured, digest $digest)" task.$t ||
      fail "task $t: the plugin did not read version $digest: $(grep TUNER task.$t)"
    echo "$node $digest"
  done
}

views_case() {
  [ -x "$loader" ] || skip "$loader was not built"
  export SLURM_TASK_PROLOG=$tests_slurm/task_record.sh
  local a b
  a=$(publish a "$work/store-n1")
  cp -a "$work/store-n1" "$work/store-n2"  # n2's view stops here
  b=$(publish b "$work/store-n1")
  [ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ] || fail "versions a ($a) and b ($b)"
  # Each node pins in its own store: the nodes disagree, as they would without a pin (the views differ).
  views_step >alone.txt
  [ "$(tail -n +2 alone.txt | sort -u | tr '\n' ' ')" = "n1 $b n2 $a " ] ||
    fail "with pins per node, expected n1's tasks on $b and n2's on $a: $(tr '\n' ' ' <alone.txt)"
  # One pin directory for the job's nodes: one version.
  export NCCL_AUTOTUNE_PIN_DIR=$work/pins
  views_step >shared.txt
  local step pinned
  step=$(head -n 1 shared.txt)
  pinned=$(tail -n +2 shared.txt | awk '{ print $2 }' | sort -u)
  [ "$(echo "$pinned" | wc -l)" = 1 ] || fail "the tasks of step $step took different versions: $(tr '\n' ' ' <shared.txt)"
  [ "$pinned" = "$a" ] || [ "$pinned" = "$b" ] || fail "step $step took version $pinned, neither a nor b"
  [ "$(ls "$NCCL_AUTOTUNE_PIN_DIR")" = "$step.pin" ] || fail "pins: $(ls "$NCCL_AUTOTUNE_PIN_DIR"), expected $step.pin"
  [ "$(tail -n +2 shared.txt | awk '{ print $1 }' | sort -u | tr '\n' ' ')" = "n1 n2 " ] || fail "not on n1 and n2"
  echo "OK: nodes seeing versions $b (n1) and $a (n2) run one version ($pinned) in all 4 tasks with a shared pin directory"
}

case "${2:-}" in
  profile) profile_case ;;
  status) status_case ;;
  views) views_case ;;
  *) fail "usage: run_check.sh BUILD_DIR profile|status|views" ;;
esac
