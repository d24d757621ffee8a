#!/bin/sh
# Open MPI's rsh agent for the stand-in's simulated nodes (scripts/standin.sh env --ranks-per-node N sets
# OMPI_MCA_plm_rsh_agent to this file and OMPI_MCA_orte_default_hostfile to a list of made-up node names).
# mpirun calls it as it would call ssh: the node's name, then the command that starts Open MPI's daemon
# there. It starts that daemon on this host instead, with NCCL_HOSTID set to the node's name (NCCL's own way
# to tell hosts apart, which the stand-in NCCL reads as NCCL does) and a TMPDIR of its own (Open MPI keeps
# its per-node session files there, which would collide between two "nodes" on one host). Open MPI then
# places ranks on nodes exactly as on a cluster, and MPI_COMM_TYPE_SHARED splits them by node.
node=$1
shift
# (exec: mpirun must see the daemon itself end, or it can miss that and wait for ever. Open MPI removes its
# session files; the empty folder stays in TMPDIR.)
dir="${TMPDIR:-/tmp}/nccl-standin-node.$PPID.$node"
mkdir -p "$dir" || exit 1
NCCL_HOSTID=$node TMPDIR=$dir exec /bin/sh -c "$*"
