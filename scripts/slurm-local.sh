#!/usr/bin/env bash
# A real Slurm cluster on this one machine, for tests: a munge daemon, slurmctld and N slurmd daemons
# (nodes n1..nN, all on this host, each slurmd on its own port and with its node's name as its tasks' host
# name), everything (configuration, key, state, logs, pid files) under one directory. Installs nothing:
# Slurm and munge come from scripts/install-deps.sh.
#
#   scripts/slurm-local.sh start [--nodes N] [--cpus C] [--gpus G] [--dir DIR] [--task-prolog FILE]
#       writes DIR/etc/slurm.conf, starts munged, slurmctld and N slurmd, waits until sinfo shows every node
#       idle, then prints `export SLURM_CONF=DIR/etc/slurm.conf` (eval it to use the cluster); G GPUs per
#       node are Slurm's gres (--gpus-per-node works), with no GPU behind them
#   scripts/slurm-local.sh stop [--dir DIR]
#       cancels the cluster's jobs and ends exactly the daemons `start` started (by their pid files)
#   scripts/slurm-local.sh status [--dir DIR]
#       exit 0 and `export SLURM_CONF=...` when the cluster in DIR is up, else 1 and why
#
# DIR defaults to ${TMPDIR:-/tmp}/nccl-autotune-slurm-<uid>. The daemons run as root (slurmd starts every
# task as its user), so `start` needs root. Exit status: 0 done, 1 the cluster did not come up (its logs are
# shown, and whatever started is stopped again), 2 bad usage, 77 it cannot run here (Slurm or munge not
# installed, not root): the skip status of the tests that use it.
set -Eeuo pipefail

usage() {
  sed -n '7,14p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

command="${1:-}"
[[ -n "$command" ]] || usage
shift
nodes=4
cpus=4
gpus=0
dir="${TMPDIR:-/tmp}/nccl-autotune-slurm-$(id -u)"
task_prolog=""
while (($#)); do
  case "$1" in
    --nodes) nodes="${2:?--nodes needs a count}"; shift 2 ;;
    --cpus) cpus="${2:?--cpus needs a count}"; shift 2 ;;
    --gpus) gpus="${2:?--gpus needs a count}"; shift 2 ;;
    --dir) dir="${2:?--dir needs a directory}"; shift 2 ;;
    --task-prolog) task_prolog="${2:?--task-prolog needs a file}"; shift 2 ;;
    *) echo "slurm-local: unknown option '$1'" >&2; usage ;;
  esac
done
[[ "$nodes" =~ ^[1-9][0-9]?$ ]] || { echo "slurm-local: --nodes: expected 1 to 99, found '$nodes'" >&2; exit 2; }
[[ "$cpus" =~ ^[1-9][0-9]?$ ]] || { echo "slurm-local: --cpus: expected 1 to 99, found '$cpus'" >&2; exit 2; }
[[ "$gpus" =~ ^[0-9]$ ]] || { echo "slurm-local: --gpus: expected 0 to 9, found '$gpus'" >&2; exit 2; }
mkdir -p "$dir"
dir="$(cd "$dir" && pwd -P)"
conf="$dir/etc/slurm.conf"
export SLURM_CONF="$conf"

say() { echo "slurm-local: $*" >&2; }

# The daemons this directory's cluster runs, each with its pid file: munged first, slurmd last.
pid_files() {
  local f
  for f in "$dir"/run/slurmd-*.pid "$dir/run/slurmctld.pid" "$dir/munge/munged.pid"; do
    [[ -e "$f" ]] && echo "$f"
  done
  return 0
}

# Whether pid $1 is still the daemon its pid file names (a pid can be reused once the daemon is gone).
is_daemon() {
  local pid="$1" name="$2" exe
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  exe="$(readlink "/proc/$pid/exe" 2>/dev/null)" || return 1
  [[ "$(basename "$exe")" == "$name"* ]]
}

daemon_name() {
  case "$(basename "$1")" in
    munged.pid) echo munged ;;
    slurmctld.pid) echo slurmctld ;;
    *) echo slurmd ;;
  esac
}

# A free TCP port block [p, p+count]: nothing listens on any of them (read from /proc, which every Linux has).
free_port_block() {
  local count="$1" used p i clash
  # (The port is hexadecimal there; bash converts it: Debian's awk, mawk, has no strtonum.)
  used="$(awk 'NR > 1 && $4 == "0A" { n = split($2, a, ":"); print a[n] }' /proc/net/tcp /proc/net/tcp6 2>/dev/null |
    while read -r hex; do echo $((16#$hex)); done | sort -un)"
  for ((p = 17000 + ($(id -u) % 50) * 20; p < 60000; p += count + 1)); do
    clash=0
    for ((i = 0; i <= count; i++)); do
      if grep -qx "$((p + i))" <<<"$used"; then clash=1; break; fi
    done
    ((clash)) || { echo "$p"; return 0; }
  done
  return 1
}

write_conf() {
  local host port="$1" last gres
  host="$(hostname -s)"
  last=$((port + nodes))
  mkdir -p "$dir/etc"
  {
    echo "# Written by scripts/slurm-local.sh: $nodes nodes on $host, for tests. Plugins that need no cgroups"
    echo "# (see docs/launcher.md, 'Tested against Slurm')."
    echo "ClusterName=autotune"
    echo "SlurmctldHost=$host(127.0.0.1)"
    echo "SlurmctldPort=$port"
    echo "SlurmUser=root"
    echo "SlurmdUser=root"
    echo "AuthType=auth/munge"
    echo "CredType=cred/munge"
    echo "AuthInfo=socket=$dir/munge/munge.socket"
    echo "StateSaveLocation=$dir/state"
    echo "SlurmdSpoolDir=$dir/spool/%n"
    echo "TmpFS=$dir/tmp/%n"  # per node: PMIx keeps each step's client directory there
    echo "SlurmctldPidFile=$dir/run/slurmctld.pid"
    echo "SlurmdPidFile=$dir/run/slurmd-%n.pid"
    echo "SlurmctldLogFile=$dir/log/slurmctld.log"
    echo "SlurmdLogFile=$dir/log/slurmd-%n.log"
    echo "SlurmctldDebug=info"
    echo "SlurmdDebug=info"
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "AccountingStorageType=accounting_storage/none"
    echo "JobCompType=jobcomp/none"
    echo "SwitchType=switch/none"
    echo "MpiDefault=pmix"
    echo "SlurmdParameters=config_overrides"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_CPU"
    echo "SchedulerType=sched/backfill"
    echo "ReturnToService=2"
    echo "SlurmdTimeout=60"
    echo "InactiveLimit=0"
    echo "KillWait=5"
    echo "MinJobAge=60"
    [[ -n "$task_prolog" ]] && echo "TaskProlog=$task_prolog"
    if ((gpus)); then
      echo "GresTypes=gpu"
      gres=" Gres=gpu:$gpus"
    fi
    echo "NodeName=n[1-$nodes] NodeHostname=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=1024 Port=$((port + 1))-$last State=UNKNOWN${gres:-}"
    echo "PartitionName=local Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
  } >"$conf"
  ((gpus)) || return 0
  # GPUs that Slurm counts and hands out (--gpus-per-node, SLURM_GPUS_ON_NODE, CUDA_VISIBLE_DEVICES) with
  # no GPU behind them: the stand-in NCCL/CUDA provides those. slurmd drops a GPU without a device file and
  # wants a character device: each is one more name for /dev/null's device (1:3).
  local i
  mkdir -p "$dir/dev"
  for ((i = 0; i < gpus; i++)); do
    [[ -c "$dir/dev/nvidia$i" ]] || mknod "$dir/dev/nvidia$i" c 1 3
  done
  echo "Name=gpu File=$dir/dev/nvidia[0-$((gpus - 1))]" >"$dir/etc/gres.conf"
}

start_munge() {
  mkdir -p "$dir/munge"
  chmod 0755 "$dir/munge"
  if [[ ! -s "$dir/munge/munge.key" ]]; then
    head -c 1024 /dev/urandom >"$dir/munge/munge.key"
    chmod 0400 "$dir/munge/munge.key"
  fi
  munged --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
    --seed-file="$dir/munge/munged.seed" --num-threads=4
}

# One slurmd, in a UTS namespace of its own whose host name is the node's: its tasks see n1, n2, ... as
# gethostname() and hostname say, as on a cluster (NCCL, Open MPI and `check` tell nodes apart by it).
# Only the name is private: network, files and processes are this host's.
start_slurmd() {
  unshare --uts sh -c 'hostname "$1" && exec slurmd -f "$2" -N "$1"' slurmd-node "$1" "$conf"
}

# Waits until every node is idle; prints why not after $1 seconds.
wait_idle() {
  local limit="$1" t states
  for ((t = 0; t < limit * 4; t++)); do
    states="$(sinfo -h -N -o '%N %t' 2>/dev/null | sort -u)" || states=""
    if [[ -n "$states" ]] && [[ "$(grep -c ' idle$' <<<"$states")" -eq "$nodes" ]]; then return 0; fi
    if grep -qE ' (inval|drain|down)' <<<"$states" && ((t > 8)); then break; fi
    sleep 0.25
  done
  say "the nodes are not idle after $((t / 4)) s: ${states:-sinfo answered nothing}" \
    "$(sinfo -h -R -o '%n: %E' 2>/dev/null | tr '\n' ' ')"
  return 1
}

show_logs() {
  local f
  for f in "$dir/munge/munged.log" "$dir/log/"*.log; do
    [[ -e "$f" ]] || continue
    say "--- last lines of $f"
    tail -n 15 "$f" >&2
  done
}

cancel_jobs() {
  [[ -e "$dir/run/slurmctld.pid" ]] || return 0
  is_daemon "$(cat "$dir/run/slurmctld.pid")" slurmctld || return 0
  scancel --full --quiet --user="$(id -un)" 2>/dev/null || true
  local t
  for ((t = 0; t < 60; t++)); do
    [[ -z "$(squeue -h -o %i 2>/dev/null)" ]] && break
    sleep 0.25
  done
}

# A step's slurmstepd lives as long as its step and holds a socket in its node's spool directory, named
# <node>_<job>.<step>. Wait for those to go.
step_sockets() { find "$dir/spool" -type s -name '*_*' 2>/dev/null; }
wait_steps_gone() {
  local t
  for ((t = 0; t < 40; t++)); do
    [[ -z "$(step_sockets)" ]] && return 0
    sleep 0.25
  done
  say "steps still running: $(step_sockets | tr '\n' ' ')"
}

# Slurm's processes still running for this cluster once its daemons are gone (a step's slurmstepd that outlived
# its slurmd): they carry this cluster's SLURM_CONF in their environment or its directory on their command line.
strays() {
  local p comm
  for p in /proc/[0-9]*; do
    comm="$(cat "$p/comm" 2>/dev/null)" || continue
    case "$comm" in slurmstepd | slurmd* | slurmctld* | slurmscriptd | munged) ;; *) continue ;; esac
    if tr '\0' '\n' 2>/dev/null <"$p/environ" | grep -qxF "SLURM_CONF=$conf" ||
      tr '\0' '\n' 2>/dev/null <"$p/cmdline" | grep -qF "$dir/"; then
      echo "${p#/proc/} $comm"
    fi
  done
}

stop_cluster() {
  local f pid name t left=0 files
  cancel_jobs
  wait_steps_gone
  mapfile -t files < <(pid_files)
  for f in "${files[@]}"; do
    pid="$(cat "$f" 2>/dev/null || true)"
    name="$(daemon_name "$f")"
    if is_daemon "$pid" "$name"; then
      kill -TERM "$pid" 2>/dev/null || true
      for ((t = 0; t < 80; t++)); do
        is_daemon "$pid" "$name" || break
        sleep 0.125
      done
      if is_daemon "$pid" "$name"; then
        say "$name ($pid) ignored SIGTERM for 10 s: SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
        sleep 0.2
      fi
      if is_daemon "$pid" "$name"; then left=1; continue; fi
    fi
    rm -f "$f"
  done
  local stray
  stray="$(strays)"
  if [[ -n "$stray" ]]; then
    say "still running for this cluster after its daemons stopped: $(tr '\n' ' ' <<<"$stray"): SIGKILL"
    awk '{ print $1 }' <<<"$stray" | xargs -r kill -KILL 2>/dev/null || true
    left=1
  fi
  return $left
}

case "$command" in
  start)
    for tool in munged slurmctld slurmd sinfo srun unshare; do
      if ! command -v "$tool" >/dev/null; then
        say "not started: $tool is not installed (scripts/install-deps.sh installs Slurm and munge)"
        exit 77
      fi
    done
    if [[ $(id -u) -ne 0 ]]; then
      say "not started: slurmd must run as root to start tasks as their user"
      exit 77
    fi
    if [[ -n "$(pid_files)" ]]; then
      stop_cluster || true  # what an earlier run left (a killed test run): start afresh
    fi
    rm -rf "$dir/state" "$dir/spool" "$dir/tmp" "$dir/log" "$dir/run"
    mkdir -p "$dir/state" "$dir/log" "$dir/run"
    for ((i = 1; i <= nodes; i++)); do mkdir -p "$dir/spool/n$i" "$dir/tmp/n$i"; done
    port="$(free_port_block "$nodes")" || { say "no free block of $((nodes + 1)) TCP ports"; exit 1; }
    write_conf "$port"
    trap 'say "start failed"; show_logs; stop_cluster || true; exit 1' ERR
    start_munge
    slurmctld -i -f "$conf"
    for ((i = 1; i <= nodes; i++)); do start_slurmd "n$i"; done
    wait_idle 60 || false
    trap - ERR
    say "$nodes nodes idle (slurmctld port $port, slurmd ports $((port + 1))-$((port + nodes))); logs in $dir/log"
    echo "export SLURM_CONF=$conf"
    ;;
  stop)
    if [[ -z "$(pid_files)" ]]; then
      say "nothing to stop in $dir"
      exit 0
    fi
    if stop_cluster; then say "stopped the daemons of $dir"; else say "a daemon of $dir is still running"; exit 1; fi
    ;;
  status)
    if [[ -e "$dir/run/slurmctld.pid" ]] && is_daemon "$(cat "$dir/run/slurmctld.pid")" slurmctld &&
      sinfo -h -o %t >/dev/null 2>&1; then
      echo "export SLURM_CONF=$conf"
    else
      say "no cluster running in $dir"
      exit 1
    fi
    ;;
  *) usage ;;
esac
