#!/bin/sh
# Several communicators in one process: ncclCommSplit of the 8 devices into tensor-parallel groups (2 x 4
# consecutive devices) or data-parallel groups (4 x 2: devices i and i+4). Each communicator gets its own
# shape's rule (rules keyed by ranks), as NCCL logs it for every communicator of the split.
#   split_check.sh BUILD_DIR JOB PLUGIN VERSION tp|dp
. "$(dirname "$0")/lib.sh"
job=$2 plugin=$3 version=$4 split=$5
realnccl_env "$1"
profile_head "$work/p.toml" "$version"
# The same bytes, a different rule per shape: 4 ranks ring/ll128, 2 ranks ring/simple, 8 ranks tree/simple.
for r in "4 ll128" "2 simple"; do
  set -- $r
  printf '\n[[rule]]\ncollective = "allreduce"\nmin_bytes = "4K"\nmax_bytes = "4K"\nalgorithm = "ring"\nprotocol = "%s"\nchannels = 0\nranks = %s\n' \
    "$2" "$1" >>"$work/p.toml"
done
printf '\n[[rule]]\ncollective = "allreduce"\nmin_bytes = "4K"\nmax_bytes = "4K"\nalgorithm = "tree"\nprotocol = "simple"\nchannels = 0\nranks = 8\n' >>"$work/p.toml"
case $split in
  tp) ranks=4 groups=2 want="RING LL128" ;;
  dp) ranks=2 groups=4 want="RING SIMPLE" ;;
  *) fail "expected tp or dp, found '$split'" ;;
esac
export NCCL_TUNER_PLUGIN="$plugin" NCCL_AUTOTUNE_PROFILE="$work/p.toml"
run_job "$work/log" --split "$split" allreduce:4096 allreduce:8192
n=$(grep -c "TUNER/Autotune: profile .* 1 of 3 rules apply to 1x$ranks " "$work/log" || true)
[ "$n" -eq 8 ] || fail "expected the 8 ranks of the $groups split communicators to read 1 rule for 1x$ranks, found $n"
# Every communicator's line for the 4096-byte operation, algorithm and protocol named (2.22 logs numbers).
lines=$(awk '/^realnccl_job: op allreduce 4096$/ { on = 1; next } /^realnccl_job: op/ { on = 0 }
  on && / Bytes -> Algo / { for (i = 1; i <= NF; i++) if ($i == "Algo") print $(i + 1), $(i + 3) }' "$work/log" |
  sed 's/^0 /TREE /; s/^1 /RING /; s/ 0$/ LL/; s/ 1$/ LL128/; s/ 2$/ SIMPLE/')
[ "$(echo "$lines" | grep -c .)" -ge "$groups" ] || fail "NCCL logged $(echo "$lines" | grep -c .) choices for $groups communicators"
echo "$lines" | grep -vx "$want" && fail "a split communicator did not run the 1x$ranks rule ($want)"
choices "$work/log" | grep -q "^allreduce 8192 .*DISAGREE" && fail "the split communicators chose differently at 8192 bytes"
echo "NCCL $version: $groups communicators of $ranks ranks, each ran its shape's rule ($want) at 4096 bytes ($(echo "$lines" | wc -l) lines)"
