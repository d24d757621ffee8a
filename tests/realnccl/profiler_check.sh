#!/bin/sh
# The profiler half under real NCCL (2.29 and later look up ncclProfiler_v6): NCCL loads the same library as
# its profiler plugin, calls its init for every communicator (the crash in ncclProfilerPluginInit seen before
# is gone with the job linked --no-relax), and with a profile without [online] the activation mask stays 0:
# every choice is the one made with NCCL_PROFILER_PLUGIN=none. (With [online] telemetry the profiler gets
# real Coll events, but NCCL's proxy then waits for kernel-channel timestamps no stand-in kernel writes:
# docs/realnccl.md.)
#   profiler_check.sh BUILD_DIR JOB PLUGIN VERSION
. "$(dirname "$0")/lib.sh"
job=$2 plugin=$3 version=$4
realnccl_env "$1"
profile_head "$work/p.toml" "$version"
printf '\n[[rule]]\ncollective = "allreduce"\nmin_bytes = "4K"\nmax_bytes = "4K"\nalgorithm = "ring"\nprotocol = "ll128"\nchannels = 0\n' >>"$work/p.toml"
ops="allreduce:4096 allreduce:1048576 allgather:65536 reducescatter:8388608 broadcast:8 reduce:33554432"
export NCCL_TUNER_PLUGIN="$plugin" NCCL_AUTOTUNE_PROFILE="$work/p.toml"
NCCL_PROFILER_PLUGIN=none run_job "$work/none.log" $ops
NCCL_PROFILER_PLUGIN="$plugin" run_job "$work/prof.log" $ops
grep -q "PROFILER/Plugin: Loaded autotune (v6)" "$work/prof.log" || {
  grep PROFILER "$work/prof.log" >&2 || true
  fail "NCCL $version did not load the profiler half as v6"
}
choices "$work/none.log" >"$work/none"
choices "$work/prof.log" >"$work/prof"
[ -s "$work/none" ] || fail "no choices logged"
diff "$work/none" "$work/prof" || fail "the profiler half changed NCCL's choices"
echo "NCCL $version: 'PROFILER/Plugin: Loaded autotune (v6)', $(wc -l <"$work/prof") choices unchanged by it"
