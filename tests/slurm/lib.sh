# Sourced by the Slurm tests (tests/slurm/*_check.sh), whose first argument is the build directory. The
# cluster is the one the ctest fixture started (slurm:cluster_start, in $SLURM_LOCAL_DIR): when it is not
# up, the test skips (exit 77) with the reason the fixture recorded. Each test gets a private work directory,
# a profile store in it, and the job's NCCL named outright (a banner-only libnccl of 2.28.9, so that what this
# machine has installed does not matter).
set -uo pipefail
tests_slurm=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source_root=$(cd "$tests_slurm/../.." && pwd)
build=$(cd "$1" && pwd)
exe=$build/cli/nccl-autotune
cluster_dir=${SLURM_LOCAL_DIR:-$build/tests/slurm/cluster}

skip() {
  echo "SKIP: $*"
  exit 77
}
fail() {
  echo "FAIL: $*"
  exit 1
}

if ! status=$("$source_root/scripts/slurm-local.sh" status --dir "$cluster_dir" 2>/dev/null); then
  skip "$(cat "$cluster_dir/not-started" 2>/dev/null || echo "no local Slurm cluster runs in $cluster_dir (ctest -L slurm starts one)")"
fi
eval "$status"  # SLURM_CONF

work=$(mktemp -d "${TMPDIR:-/tmp}/autotune-slurm.XXXXXX")
background=()  # processes a test started in the background: ended with it, however it ends
trap 'for p in ${background[@]+"${background[@]}"}; do kill -KILL "$p" 2>/dev/null; done; rm -rf "$work"' EXIT
umask 077  # the launcher and the plugin refuse profiles that others may write
cd "$work" || exit 1
export NCCL_AUTOTUNE_CACHE_DIR=$work/cache
export NCCL_AUTOTUNE_NCCL_LIB=$build/tests/nccl/nccl-2.28.9/libnccl.so.2
export NCCL_AUTOTUNE_STORE=$work/store
unset NCCL_AUTOTUNE_PROFILE NCCL_AUTOTUNE_PROFILE_DIGEST NCCL_AUTOTUNE_PIN_DIR NCCL_TUNER_PLUGIN
# Every slurmd of this cluster runs on this one host, so Open MPI's shared-memory transport would map the
# same segment names for the "nodes" n1 and n2 and crash: ranks talk over TCP on loopback, as between nodes.
export OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo
# wait_bounded PID SECONDS: its exit status, or a failure when it is still running after SECONDS.
wait_bounded() {
  for _ in $(seq $(($2 * 10))); do
    kill -0 "$1" 2>/dev/null || { wait "$1"; return; }
    sleep 0.1
  done
  fail "process $1 still running after $2 s"
}
# Bounded: a step that hangs fails the test instead of holding the cluster.
srun() { timeout 90 srun "$@"; }
sbatch() { timeout 90 sbatch "$@"; }
salloc() { timeout 300 salloc "$@"; }

# make_profile FILE VERSION [FINGERPRINT]: a measured profile of cluster "slurmtest" for NCCL 2.28; without a
# fingerprint any node may use it when it is named (--cluster), with this node's (node_fingerprint) the
# launcher also finds it unnamed, as a site's TaskProlog does. VERSION a or b differ in every [env] value, so
# a task's settings say which version it got.
make_profile() {
  local cross hca ifname
  case "$2" in
    a) cross=0 hca="=mlx5_0:1,mlx5_1:1" ifname="=eth0" ;;
    b) cross=1 hca="^mlx5_2,mlx5_3" ifname="^docker,lo" ;;
    *) fail "make_profile: version a or b" ;;
  esac
  cat >"$1" <<EOF
schema = 1

[cluster]
name = "slurmtest"
fingerprint = "${3:-}"

[provenance]
created = "2026-12-01T00:00:00Z"
tool_version = "0.1.0"
nccl_version = "2.28.9"
source = "measured"

[env]
NCCL_CROSS_NIC = "$cross"
NCCL_IB_HCA = "$hca"
NCCL_SOCKET_IFNAME = "$ifname"

[[rule]]
collective = "allreduce"
min_bytes = "1M"
max_bytes = "4M"
algorithm = "ring"
protocol = "simple"
EOF
}

# This node's fingerprint as the launcher computes it (every node of this cluster is this host).
node_fingerprint() {
  mkdir -p "$work/empty-store"
  "$exe" env --store "$work/empty-store" --format json 2>/dev/null | sed -n 's/^  "fingerprint": "\([0-9a-f]*\)",$/\1/p'
}

# publish VERSION [STORE [FINGERPRINT]]: saves that version as the store's current profile of cluster
# slurmtest (the store keeps every version under its digest); prints the digest.
publish() {
  local store=${2:-$NCCL_AUTOTUNE_STORE}
  make_profile "$work/profile-$1.toml" "$1" "${3:-}"
  "$exe" profile import "$work/profile-$1.toml" --store "$store" >/dev/null || fail "profile import of version $1"
  "$exe" env --store "$store" --cluster slurmtest --format json | sed -n 's/^  "digest": "\([0-9a-f]*\)",$/\1/p'
}

# The value a dump of `env` (NAME=value lines) gives NAME.
value_in() { sed -n "s/^$1=//p" "$2"; }

# Distinct lines of a file, counted.
distinct() { sort -u "$1" | wc -l; }

# use_standin: the stand-in NCCL and CUDA (scripts/standin.sh, the bundled h100-8x node) for every command
# that follows, Slurm's tasks included (srun exports the whole environment): the job's NCCL is then the
# stand-in's libnccl, found by the launcher in LD_LIBRARY_PATH as on a cluster.
use_standin() {
  [ -e "$build/tests/standin/lib/libnccl.so.2" ] || skip "the stand-in NCCL was not built (no CUDA/NCCL headers at build time)"
  local lines
  lines=$("$source_root/scripts/standin.sh" env --build "$build") || fail "scripts/standin.sh env"
  eval "$lines"
  unset NCCL_AUTOTUNE_NCCL_LIB
}

# record_tasks: every task of every srun from here on (also those tune starts) is recorded as Slurm placed it
# in $work/tasks (task_record.sh, through SLURM_TASK_PROLOG, srun's --task-prolog).
record_tasks() {
  mkdir -p "$work/tasks"
  export SLURM_TASK_PROLOG=$tests_slurm/task_record.sh NCCL_AUTOTUNE_TEST_TASKS=$work/tasks
}

# The steps the recorded tasks ran in, one line each in the order Slurm numbered them:
# "<job>.<step> <tasks> <node>:<local ranks>..." ("12.0 4 n1:0,1 n2:0,1"), and " NCCL_CROSS_NIC=V" where
# the step's tasks had it. Fails when a task did not see its node's name as its host name, a step's tasks
# were not all recorded or disagree on NCCL_CROSS_NIC.
steps() {
  python3 - "$work/tasks" <<'PY' || fail "the recorded tasks: see above"
import collections, os, sys
steps = collections.defaultdict(list)
bad = False
for name in os.listdir(sys.argv[1]):
    step, node, rank, local, total, host, _, cross_nic = open(os.path.join(sys.argv[1], name)).read().split()
    if host != node:
        print(f"task {rank} of step {step} ran on {node} with host name {host}", file=sys.stderr)
        bad = True
    steps[step].append((node, int(local), int(total), cross_nic))
for step in sorted(steps, key=lambda s: tuple(int(x) for x in s.split("."))):
    tasks = steps[step]
    if len(tasks) != tasks[0][2]:
        print(f"step {step}: {len(tasks)} of {tasks[0][2]} tasks recorded", file=sys.stderr)
        bad = True
    nodes = collections.defaultdict(list)
    for node, local, _, _ in tasks:
        nodes[node].append(local)
    line = f"{step} {len(tasks)} " + " ".join(f"{n}:{','.join(map(str, sorted(l)))}" for n, l in sorted(nodes.items()))
    cross_nic = {t[3] for t in tasks}
    if len(cross_nic) > 1:
        print(f"step {step}: the tasks disagree on NCCL_CROSS_NIC: {sorted(cross_nic)}", file=sys.stderr)
        bad = True
    print(line + ("" if cross_nic == {"-"} else f" NCCL_CROSS_NIC={cross_nic.pop()}"))
sys.exit(bad)
PY
}
