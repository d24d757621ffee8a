#!/bin/sh
# NCCL's own tuner loader finds libnccl-tuner-autotune.so through NCCL_TUNER_PLUGIN and takes the ABI version
# that NCCL release looks for first (v5 in 2.29, v3 in 2.22), as NCCL's INFO line says; the plugin's init
# then reads the profile (our own INFO line) and a rule steers NCCL's choice, which NCCL logs.
#   loads_plugin.sh BUILD_DIR JOB PLUGIN VERSION
. "$(dirname "$0")/lib.sh"
job=$2 plugin=$3 version=$4
realnccl_env "$1"
profile_head "$work/p.toml" "$version"
cat >>"$work/p.toml" <<'TOML'

[[rule]]
collective = "allreduce"
min_bytes = "4K"
max_bytes = "4K"
algorithm = "ring"
protocol = "ll128"
channels = 0
TOML
export NCCL_TUNER_PLUGIN="$plugin" NCCL_AUTOTUNE_PROFILE="$work/p.toml"
run_job "$work/log" allreduce:4096
case $version in
  2.29.*) expected="TUNER/Plugin: Using autotune (v5)" ;;
  2.22.*) expected="TUNER/Plugin: Using tuner plugin autotune" ;;
  *) fail "no expected loader line for NCCL $version" ;;
esac
grep -q "NCCL version $version" "$work/log" || fail "the job did not run NCCL $version"
grep -qF "$expected" "$work/log" || {
  grep "TUNER" "$work/log" >&2 || true
  fail "NCCL $version did not say '$expected'"
}
# 2.22 says which symbol it fell back from; nothing said means it took its first, v3.
if grep -q "Failed to find ncclTunerPlugin_v" "$work/log"; then fail "NCCL $version did not find the ABI it looks for first"; fi
grep -q "TUNER/Autotune: profile .* 1 of 1 rules apply" "$work/log" || fail "the plugin's init did not read the profile"
choices "$work/log" | grep -q "^allreduce 4096 RING LL128 " || {
  choices "$work/log" >&2
  fail "NCCL did not run the rule's ring/ll128 at 4096 bytes"
}
echo "NCCL $version: '$expected'; the rule's AllReduce 4096 -> RING LL128"
