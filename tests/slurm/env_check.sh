#!/usr/bin/env bash
# `nccl-autotune env` where Slurm meets it.
#   batch:   an sbatch script runs eval "$(nccl-autotune env)" and then srun: every task has the environment
#            the script exported, and keeps that version when the store changes before the step starts, also
#            through an inner `nccl-autotune run`.
#   prolog:  `env --format slurm` as the cluster's TaskProlog (slurm.conf) and as srun --task-prolog: each task
#            sees every variable exactly as `env --format sh` gives it to a shell, for a store and a plugin
#            directory whose paths hold spaces, '=', ',' and a carriage return (values reach the task as
#            slurmstepd reads them, not as the documentation says).
#   refused: a store path with a line feed cannot be carried: `env --format slurm` prints nothing and says
#            why (status 0, 2 with --strict), the task starts untuned, and text after the line feed never
#            becomes an export line.
# Usage: env_check.sh BUILD_DIR batch|prolog|refused
. "$(dirname "$0")/lib.sh"

# The task's NCCL_ variables as NAME=value lines, sorted (values may hold anything but a line feed).
dump='env | grep "^NCCL_" | grep -v "^NCCL_AUTOTUNE_TEST_PROLOG=" | LC_ALL=C sort'

batch_case() {
  local a b
  a=$(publish a)
  cat >job.sh <<EOF
#!/bin/bash
eval "\$("$exe" env --cluster slurmtest)"
$dump >batch.env
touch evaluated
while [ ! -e go ]; do sleep 0.05; done
srun -o "task.%t" sh -c '$dump'
srun -o "inner.%t" "$exe" run -- sh -c '$dump'
EOF
  chmod +x job.sh
  sbatch --parsable -N 2 --ntasks-per-node 2 -o job.out job.sh >jobid || fail "sbatch: $(cat jobid)"
  for _ in $(seq 300); do [ -e evaluated ] && break; sleep 0.1; done
  [ -e evaluated ] || { cat job.out; fail "the batch script did not start"; }
  b=$(publish b)  # the store moves on before the steps start
  touch go
  for _ in $(seq 300); do [ -z "$(squeue -h -j "$(cat jobid)" 2>/dev/null)" ] && break; sleep 0.1; done
  cat job.out
  [ "$(value_in NCCL_AUTOTUNE_PROFILE_DIGEST batch.env)" = "$a" ] || fail "the batch script's digest is not version a's ($a)"
  [ "$(value_in NCCL_CROSS_NIC batch.env)" = 0 ] || fail "the batch script did not get version a's [env]"
  [ "$a" != "$b" ] || fail "versions a and b have one digest"
  for t in 0 1 2 3; do
    [ -s task.$t ] && [ -s inner.$t ] || fail "task $t wrote nothing"
    cmp -s batch.env task.$t || { diff batch.env task.$t; fail "task $t's environment is not the batch script's"; }
    cmp -s batch.env inner.$t || { diff batch.env inner.$t; fail "task $t under run: not the batch script's version"; }
  done
  echo "OK: 4 tasks on 2 nodes have the batch script's environment (version $a), also under run, after the store moved to $b"
}

# The variables `env --format sh` exports, as a shell that evals it has them: the reference.
expected_env() {
  (
    eval "$("$exe" env --format sh)" || exit 1
    eval "$dump"
  ) >"$1"
}

prolog_case() {
  local cr=$'\r'
  export NCCL_AUTOTUNE_STORE="$work/store dir, a=b$cr"
  export NCCL_AUTOTUNE_PLUGIN_DIR="$work/plugins=x, y"
  mkdir -p "$NCCL_AUTOTUNE_PLUGIN_DIR"
  cp "$build/plugins/libnccl-tuner-autotune.so" "$NCCL_AUTOTUNE_PLUGIN_DIR/"
  local fingerprint
  fingerprint=$(node_fingerprint)
  [ -n "$fingerprint" ] || fail "no fingerprint for this node"
  publish a "$NCCL_AUTOTUNE_STORE" "$fingerprint" >/dev/null  # found by fingerprint, as a site's prolog finds it
  "$exe" env --format slurm >slurm.txt 2>slurm.err || fail "env --format slurm: $(cat slurm.err)"
  grep -qF "export NCCL_AUTOTUNE_PROFILE=$NCCL_AUTOTUNE_STORE/versions/" slurm.txt ||
    fail "env --format slurm does not print the path as it is: $(cat -A slurm.txt)"
  expected_env want.env || fail "env --format sh"
  grep -q "^NCCL_TUNER_PLUGIN=$NCCL_AUTOTUNE_PLUGIN_DIR/libnccl-tuner-autotune.so$" want.env ||
    fail "the reference environment lacks the plugin: $(cat -A want.env)"
  # The site's TaskProlog (slurm.conf), for the jobs that ask for it.
  NCCL_AUTOTUNE_TEST_PROLOG=1 srun -N 2 -n 4 -o "conf.%t" sh -c "$dump" || fail "srun with the TaskProlog"
  # The user's own, srun --task-prolog, through the same parser.
  printf '#!/bin/sh\nexec "%s" env --format slurm\n' "$exe" >user-prolog.sh
  chmod +x user-prolog.sh
  srun -N 2 -n 2 --task-prolog="$work/user-prolog.sh" -o "user.%t" sh -c "$dump" || fail "srun --task-prolog"
  for f in conf.0 conf.1 conf.2 conf.3 user.0 user.1; do
    cmp -s want.env $f || { diff <(cat -A want.env) <(cat -A $f); fail "$f: the task's environment is not env --format sh's"; }
  done
  # Without the hook's switch the task starts untouched.
  srun -N 1 -n 1 sh -c "$dump" >plain.env || fail "srun without the TaskProlog"
  ! grep -q "^NCCL_TUNER_PLUGIN=" plain.env || fail "a task that did not ask for the TaskProlog got the plugin"
  echo "OK: the TaskProlog (slurm.conf and --task-prolog) gave 6 tasks on 2 nodes exactly env --format sh's values, spaces, '=', ',' and CR included"
}

refused_case() {
  export NCCL_AUTOTUNE_STORE="$work/store"$'\n'"export NCCL_INJECTED=1"
  publish a "$NCCL_AUTOTUNE_STORE" "$(node_fingerprint)" >/dev/null
  "$exe" env --format slurm >out.txt 2>err.txt
  rc=$?
  [ $rc = 0 ] || fail "env --format slurm exited with $rc for a value it cannot carry (0 expected)"
  [ ! -s out.txt ] || fail "env --format slurm printed: $(cat out.txt)"
  grep -qx "nccl-autotune env: NCCL_AUTOTUNE_PROFILE holds a line break, which a Slurm TaskProlog cannot export (slurmstepd reads one export per line); nothing exported, the job runs untuned" err.txt ||
    fail "the refusal is not said: $(cat err.txt)"
  "$exe" env --format slurm --strict >/dev/null 2>&1
  [ $? = 2 ] || fail "env --format slurm --strict did not exit with 2"
  "$exe" env --format sh >sh.txt || fail "env --format sh"
  grep -q "^export NCCL_TUNER_PLUGIN=" sh.txt || fail "the sh form, which can quote a line feed, exported nothing"
  NCCL_AUTOTUNE_TEST_PROLOG=1 srun -N 2 -n 2 -o "task.%t" sh -c "$dump" || fail "the tasks did not start"
  for t in 0 1; do
    ! grep -Eq "^NCCL_(TUNER_PLUGIN|AUTOTUNE_PROFILE|AUTOTUNE_PROFILE_DIGEST|CROSS_NIC|INJECTED)=" task.$t ||
      fail "task $t got: $(grep -E '^NCCL_(TUNER|AUTOTUNE_PROFILE|CROSS|INJECTED)' task.$t)"
  done
  echo "OK: a value with a line feed is refused (nothing exported, said on stderr, status 0 / 2 strict); tasks start untuned"
}

case "${2:-}" in
  batch) batch_case ;;
  prolog) prolog_case ;;
  refused) refused_case ;;
  *) fail "usage: env_check.sh BUILD_DIR batch|prolog|refused" ;;
esac
