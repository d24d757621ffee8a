#!/usr/bin/env bash
# The Slurm tests' cluster, as a ctest fixture: `start` runs before the first test labelled slurm
# (slurm:cluster_start, FIXTURES_SETUP) and `stop` after the last (slurm:cluster_stop, FIXTURES_CLEANUP), also
# when a test fails, so that `ctest -L slurm` alone brings the cluster up and down. Four nodes of four CPUs and
# two GPUs each (Slurm's gres, no device behind them: the stand-in's), every node its own host name, with
# the TaskProlog hook of task_prolog.sh. Where Slurm cannot run here, `start` records why in
# DIR/not-started and skips; every test then skips with that reason.
# Usage: cluster.sh start|stop DIR BINARY
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
local_sh=$here/../../scripts/slurm-local.sh
action=$1 dir=$2 exe=$3
mkdir -p "$dir"
case "$action" in
  start)
    rm -f "$dir/not-started"
    # The hook runs as the job's user from slurmstepd: it must name the binary itself.
    sed "s|@NCCL_AUTOTUNE@|$exe|" "$here/task_prolog.sh" >"$dir/task-prolog.sh"
    chmod 0755 "$dir/task-prolog.sh"
    "$local_sh" start --dir "$dir" --nodes 4 --cpus 4 --gpus 2 --task-prolog "$dir/task-prolog.sh" 2>"$dir/start.err"
    rc=$?
    cat "$dir/start.err"
    if ((rc == 77)); then
      sed -n 's/^slurm-local: //p' "$dir/start.err" | head -n 1 >"$dir/not-started"
      echo "SKIP: $(cat "$dir/not-started")"
      exit 77
    fi
    if ((rc != 0)); then
      echo "the local Slurm cluster did not start (scripts/slurm-local.sh start: status $rc)" >"$dir/not-started"
      exit 1
    fi
    ;;
  stop)
    "$local_sh" stop --dir "$dir"
    ;;
  *)
    echo "usage: cluster.sh start|stop DIR BINARY" >&2
    exit 2
    ;;
esac
