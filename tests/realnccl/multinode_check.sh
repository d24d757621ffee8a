#!/bin/sh
# Two processes posing as two nodes (NCCL_HOSTID differs, one rank each): NCCL builds a communicator across
# them over its socket transport (nNodes 2), so the plugin gets NCCL's multi-node cost table and a 2x1 shape.
# A rule for 2 nodes x 1 rank (ring/simple at 4 KiB, where NCCL itself picks ring/ll) must be what both ranks
# run. One collective per job: the second would wait for data no stand-in kernel posts (realnccl_job.cpp).
#   multinode_check.sh BUILD_DIR JOB PLUGIN VERSION
. "$(dirname "$0")/lib.sh"
job=$2 plugin=$3 version=$4
realnccl_env "$1"
profile_head "$work/p.toml" "$version"
printf '\n[[rule]]\ncollective = "allreduce"\nmin_bytes = "4K"\nmax_bytes = "4K"\nalgorithm = "ring"\nprotocol = "simple"\nchannels = 0\nnodes = 2\nranks = 2\n' >>"$work/p.toml"
run_pair() { # LOG_PREFIX: both ranks, each its own log; fails when either fails
  for r in 0 1; do
    NCCL_HOSTID="realnccl-node$r" timeout 120 "$job" --rank $r --nranks 2 --id-file "$work/$1.id" allreduce:4096 \
      >"$work/$1.$r.log" 2>&1 &
    eval "pid$r=\$!"
  done
  wait "$pid0" || { tail -n 20 "$work/$1.0.log" >&2; fail "rank 0 failed ($1)"; }
  wait "$pid1" || { tail -n 20 "$work/$1.1.log" >&2; fail "rank 1 failed ($1)"; }
}
NCCL_TUNER_PLUGIN=none run_pair none
grep -q "nRanks 2 nNodes 2" "$work/none.0.log" || fail "NCCL did not see two nodes: $(grep -m1 'nRanks' "$work/none.0.log")"
default=$(choices "$work/none.0.log")
echo "NCCL $version, 2 nodes x 1 rank, no plugin: $default"
export NCCL_TUNER_PLUGIN="$plugin" NCCL_AUTOTUNE_PROFILE="$work/p.toml"
run_pair tuned
# Both ranks read the rule for their 2x1 shape; NCCL logs the choice on rank 0 only (rank 1's log, if it has
# the line, must say the same).
for r in 0 1; do
  grep -q "TUNER/Autotune: profile .* 1 of 1 rules apply to 2x1 " "$work/tuned.$r.log" ||
    fail "rank $r: the plugin did not read the 2x1 rule: $(grep -m1 'TUNER/Autotune' "$work/tuned.$r.log")"
done
got=$(choices "$work/tuned.0.log")
echo "$got" | grep -q "^allreduce 4096 RING SIMPLE" || fail "rank 0 ran '$got', not the rule's ring/simple"
other=$(choices "$work/tuned.1.log")
[ -z "$other" ] || [ "$(echo "$other" | cut -d' ' -f1-4)" = "$(echo "$got" | cut -d' ' -f1-4)" ] ||
  fail "the two ranks chose differently: '$got' and '$other'"
echo "NCCL $version, 2 nodes x 1 rank with the plugin: $got"
