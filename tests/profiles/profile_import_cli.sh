#!/usr/bin/env bash
# `nccl-autotune profile import` of NCCL's example-plugin CSV: recognised by content whatever its name
# (NCCL's own file is nccl_tuner.conf), numPipeOps/regBuff kept as pipe_ops/reg_buff, lines NCCL never runs
# left out with one stderr line each, and the profile written to the store. Argument: the nccl-autotune binary.
set -uo pipefail
bin=$1
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cat >"$dir/nccl_tuner.conf" <<'CSV'
# collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff
allreduce,0,65535,tree,ll,2,1,-1,-1,1
allreduce,65536,1048575,ring,simple,4,2,16,1,0
broadcast,0,32768,tree,simple,-1,1,-1,-1,1
reduce,0,4294967295,ring,simple,-1,-1,-1
CSV
out=$("$bin" profile import "$dir/nccl_tuner.conf" --store "$dir/store" --name imp --nccl-version 2.30.7 2>"$dir/err") ||
  fail "exit $?: $out $(cat "$dir/err")"
[[ $out == "imported 3 rules into $dir/store/imp-nccl2.30.toml" ]] || fail "output: $out"
grep -q "nccl_tuner.conf:4: line skipped: algorithm: NCCL runs broadcast with ring only" "$dir/err" ||
  fail "no warning for the broadcast/tree line: $(cat "$dir/err")"
(( $(wc -l <"$dir/err") == 1 )) || fail "expected one warning: $(cat "$dir/err")"
toml="$dir/store/imp-nccl2.30.toml"
grep -q '^reg_buff = true$' "$toml" || fail "reg_buff not kept"
grep -q '^pipe_ops = 1$' "$toml" || fail "pipe_ops not kept"
csv=$("$bin" profile export "$toml" --format nccl-csv) || fail "export: exit $?"
grep -q '^allreduce,0,65535,tree,ll,2,1,-1,-1,1$' <<<"$csv" || fail "export: $csv"
grep -q '^reduce,0,4294967295,ring,simple,-1,-1,-1$' <<<"$csv" || fail "export: $csv"
echo "profile import: ok"
