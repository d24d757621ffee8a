#!/usr/bin/env bash
# The cluster is a real multi-node Slurm cluster: srun -N 2 -n 2 runs one task on each of two nodes, -N 4 on
# four, each task with its own node name, local id and the step's id; salloc gives an allocation whose srun
# steps stay inside it.
# Usage: cluster_check.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
srun -N 2 -n 2 -w n1,n2 sh -c 'echo "$SLURMD_NODENAME $SLURM_PROCID $SLURM_LOCALID $SLURM_JOB_ID.$SLURM_STEP_ID"' \
  >two.txt 2>&1 || { cat two.txt; fail "srun -N 2 -n 2 failed"; }
cat two.txt
[ "$(awk '{ print $1 }' two.txt | sort -u | tr '\n' ' ')" = "n1 n2 " ] || fail "not one task on each of n1 and n2"
[ "$(awk '{ print $3 }' two.txt | sort -u)" = 0 ] || fail "a task's SLURM_LOCALID is not 0 with one task per node"
[ "$(awk '{ print $4 }' two.txt | sort -u | wc -l)" = 1 ] || fail "the tasks disagree on the step"
srun -N 4 --ntasks-per-node 2 sh -c 'echo $SLURMD_NODENAME' >four.txt 2>&1 || { cat four.txt; fail "srun -N 4"; }
[ "$(sort four.txt | uniq -c | awk '{ print $1 $2 }' | tr '\n' ' ')" = "2n1 2n2 2n3 2n4 " ] ||
  fail "srun -N 4 --ntasks-per-node 2: $(sort four.txt | uniq -c | tr '\n' ' ')"
salloc -N 2 sh -c 'srun sh -c "echo \$SLURMD_NODENAME \$SLURM_JOB_ID"; echo "outside $SLURM_JOB_ID $SLURM_NNODES"' \
  >alloc.txt 2>&1 || { cat alloc.txt; fail "salloc -N 2"; }
cat alloc.txt
job=$(sed -n 's/^outside \([0-9]*\) 2$/\1/p' alloc.txt)
[ -n "$job" ] || fail "salloc -N 2 did not give SLURM_JOB_ID and SLURM_NNODES=2 to its command"
[ "$(grep -c "^n[1-4] $job$" alloc.txt)" = 2 ] || fail "srun inside the allocation did not run on its two nodes"
echo "OK: a Slurm $(sinfo -V | awk '{ print $2 }') cluster of $(sinfo -h -N | wc -l) nodes on this host"
