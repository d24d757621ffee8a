# Sourced by the stand-in's test scripts (tests/standin/*_check.sh), whose first argument is the build
# directory: a private work directory (also TMPDIR, so the simulated nodes' files go there and go with it),
# the stand-in's environment through scripts/standin.sh, and mpirun as the tests run it here (as root,
# oversubscribed, bounded in time).
set -uo pipefail
standin_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "$1" && pwd)
exe=$build/cli/nccl-autotune
job=$build/tests/standin/standin_job
work=$(mktemp -d)
trap '[ -n "${KEEP_WORK:-}" ] || rm -rf "$work"' EXIT
export TMPDIR=$work
umask 077  # the plugin refuses profiles that others may write
export NCCL_AUTOTUNE_PIN_DIR=$work/pins  # the launcher's job pins, kept out of the user's cache
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

fail() {
  echo "FAIL: $*"
  exit 1
}
# use_standin [--ranks-per-node N --nodes M] [--example NAME]: the stand-in for every command that follows.
use_standin() {
  local lines
  lines=$("$standin_root/scripts/standin.sh" env --build "$build" "$@") || fail "scripts/standin.sh env $*"
  eval "$lines"
}
need_mpirun() {
  command -v mpirun >/dev/null 2>&1 || {
    echo "SKIP: mpirun not found"
    exit 77
  }
  [ -x "$job" ] || {
    echo "SKIP: $job was not built (no MPI at build time)"
    exit 77
  }
}
mpi() { timeout 150 mpirun "$@"; }
