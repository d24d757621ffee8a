#!/bin/sh
# The TaskProlog (slurm.conf) of the Slurm tests' cluster: what docs/launcher.md tells a site to install,
# `exec nccl-autotune env --format slurm`, for the jobs that ask for it with NCCL_AUTOTUNE_TEST_PROLOG=1 in
# their environment (a TaskProlog sees the task's environment); every other job's tasks start untouched.
# cluster.sh writes @NCCL_AUTOTUNE@ as the binary's path.
[ "${NCCL_AUTOTUNE_TEST_PROLOG:-}" = 1 ] || exit 0
exec @NCCL_AUTOTUNE@ env --format slurm
