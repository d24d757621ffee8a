#!/bin/sh
# A TaskProlog the Slurm tests hand to every srun they cause (SLURM_TASK_PROLOG, which srun reads as
# --task-prolog, so that it reaches the steps `tune` starts too). slurmstepd runs it before each task:
#   - with NCCL_AUTOTUNE_TEST_TASKS=DIR it records the task as Slurm placed it, in DIR/<job>.<step>.<rank>:
#     "<job>.<step> <node> <rank> <local rank> <tasks in step> <host name> <CUDA_VISIBLE_DEVICES>
#     <NCCL_CROSS_NIC>" ("-" for one unset);
#   - with NCCL_AUTOTUNE_TEST_NODE_STORE=PREFIX it gives the task the store PREFIX<node> (prints the export
#     line slurmstepd reads): nodes that see the store differently;
#   - with NCCL_AUTOTUNE_TEST_NODE_EXPORT="NODE:NAME=VALUE ..." it exports NAME=VALUE in that node's tasks
#     (a fault on one node).
if [ -n "${NCCL_AUTOTUNE_TEST_TASKS:-}" ]; then
  echo "$SLURM_JOB_ID.$SLURM_STEP_ID $SLURMD_NODENAME $SLURM_PROCID $SLURM_LOCALID $SLURM_STEP_NUM_TASKS $(hostname) ${CUDA_VISIBLE_DEVICES:--} ${NCCL_CROSS_NIC:--}" \
    >"$NCCL_AUTOTUNE_TEST_TASKS/$SLURM_JOB_ID.$SLURM_STEP_ID.$SLURM_PROCID"
fi
if [ -n "${NCCL_AUTOTUNE_TEST_NODE_STORE:-}" ]; then
  echo "export NCCL_AUTOTUNE_STORE=$NCCL_AUTOTUNE_TEST_NODE_STORE$SLURMD_NODENAME"
fi
for item in ${NCCL_AUTOTUNE_TEST_NODE_EXPORT:-}; do
  [ "${item%%:*}" = "$SLURMD_NODENAME" ] && echo "export ${item#*:}"
done
exit 0
