#!/bin/sh
# The stand-in CUDA runtime and NCCL (tests/standin) for any command on a machine without GPUs:
#   eval "$(scripts/standin.sh env [--build DIR] [--example NAME | --topology FILE] [--ranks-per-node N [--nodes M]])"
# prints the shell `export` lines that put build/tests/standin/lib in front of the real libcudart.so.13 and
# libnccl.so.2, a stand-in nvidia-smi on PATH, and which recorded node the GPUs come from (default: the
# bundled h100-8x example). With --ranks-per-node N, mpirun places N ranks on each of M simulated nodes of
# this host (default 8; tests/standin/tools/node_agent.sh says how; Open MPI's start-up slows by seconds per
# 16 listed nodes, so list no more than a test needs). Exit status 2 for bad usage.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)

usage() {
  echo "usage: scripts/standin.sh env [--build DIR] [--example NAME | --topology FILE] [--ranks-per-node N [--nodes M]]" >&2
  exit 2
}
bad() {
  echo "scripts/standin.sh: $1" >&2
  exit 2
}
# Single-quoted for the shell that evaluates the output.
quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

[ $# -ge 1 ] && [ "$1" = env ] || usage
shift
build="$here/build" example="" topology="" per_node="" nodes=8
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || { [ "$1" = --help ] && usage; bad "$1: expected a value after it"; }
  case $1 in
    --build) build=$2 ;;
    --example) example=$2 ;;
    --topology) topology=$2 ;;
    --ranks-per-node) per_node=$2 ;;
    --nodes) nodes=$2 ;;
    *) bad "expected --build, --example, --topology, --ranks-per-node or --nodes, found '$1'" ;;
  esac
  shift 2
done
[ -z "$example" ] || [ -z "$topology" ] || bad "expected --example or --topology, found both"
lib="$build/tests/standin/lib"
[ -e "$lib/libnccl.so.2" ] && [ -e "$lib/libcudart.so.13" ] ||
  bad "$build: expected a build directory holding the stand-in ($lib/libnccl.so.2), found none (build it: cmake --build $build)"
build=$(cd "$build" && pwd)
lib="$build/tests/standin/lib"

if [ -n "$topology" ]; then
  [ -r "$topology" ] || bad "--topology: expected a readable topology file, found '$topology'"
  topology=$(cd "$(dirname "$topology")" && pwd)/$(basename "$topology")
fi
if [ -n "$per_node" ]; then
  for v in "--ranks-per-node $per_node" "--nodes $nodes"; do
    case ${v#* } in
      '' | *[!0-9]* | 0*) bad "${v% *}: expected a positive integer, found '${v#* }'" ;;
    esac
  done
fi

echo "export LD_LIBRARY_PATH=$(quote "$lib")\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
echo "export PATH=$(quote "$build/tests/standin/bin"):\"\$PATH\""
if [ -n "$topology" ]; then
  echo "export NCCL_STANDIN_TOPOLOGY=$(quote "$topology")"
  echo "unset NCCL_STANDIN_EXAMPLE"
else
  echo "export NCCL_STANDIN_EXAMPLE=$(quote "${example:-h100-8x}")"
  echo "unset NCCL_STANDIN_TOPOLOGY"
fi
if [ -n "$per_node" ]; then
  hosts="$build/tests/standin/hosts-${nodes}x$per_node"
  i=0
  : >"$hosts.$$"
  while [ $i -lt "$nodes" ]; do
    echo "standin-node$i slots=$per_node" >>"$hosts.$$"
    i=$((i + 1))
  done
  mv "$hosts.$$" "$hosts"
  echo "export OMPI_MCA_orte_default_hostfile=$(quote "$hosts")"
  echo "export OMPI_MCA_plm_rsh_agent=$(quote "$here/tests/standin/tools/node_agent.sh")"
  # Daemons only on the nodes that get ranks, all started from mpirun; TCP between processes, as between nodes.
  echo "export OMPI_MCA_orte_no_vm=1 OMPI_MCA_plm_rsh_no_tree_spawn=1 OMPI_MCA_btl=self,tcp"
fi
