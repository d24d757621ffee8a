#!/bin/sh
# check and tune's health gate through the command line, on the simulated 8 x H100 cluster of issue 16:
# healthy, it exits 0 and flags nothing; with a half-rate NIC on node 3 and a throttled GPU on node 5 it
# exits 1 naming exactly those nodes and devices; tune on that cluster refuses (exit 2, the nodes named),
# and calibrates without them with --exclude-unhealthy, which the profile records.
set -u
bin="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
faults="--sim-fault node=3,nic=1,rate=0.5 --sim-fault node=5,gpu=2,clock=0.6"

"$bin" check --simulate --example h100-8x --nodes 8 > "$dir/ok.txt" 2> "$dir/ok.err"
[ $? -eq 0 ] || fail "healthy check exit status $?"
grep -q "^status: ok$" "$dir/ok.txt" || fail "healthy check: $(cat "$dir/ok.txt")"
grep -q "check: 7/7 passes done" "$dir/ok.err" || fail "no progress line: $(cat "$dir/ok.err")"

# shellcheck disable=SC2086
"$bin" check --simulate --example h100-8x --nodes 8 $faults --format json > "$dir/sick.json" 2>/dev/null
[ $? -eq 1 ] || fail "sick check exit status $?"
flagged=$(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" ".join("%d:%s:%s" % (n["node"], f["device"], f["severity"]) for n in j["nodes"] for f in n["findings"]))
print(" ".join("%d:%s" % (n["node"], n["status"]) for n in j["nodes"]))' "$dir/sick.json")
[ "$(echo "$flagged" | head -1)" = "3:mlx5_1:block 5:GPU2:block" ] || fail "flagged: $flagged"
[ "$(echo "$flagged" | tail -1)" = "0:ok 1:ok 2:ok 3:block 4:ok 5:block 6:ok 7:ok" ] || fail "statuses: $flagged"

tune="$bin tune --simulate --example h100-8x --nodes 8 --collectives allreduce --max-bytes 64K --store $dir/store"
# shellcheck disable=SC2086
$tune $faults > "$dir/refused.out" 2> "$dir/refused.err"
[ $? -eq 2 ] || fail "tune on the sick cluster: exit status $?"
grep -q "found 2 blocking: node 3: mlx5_1: .* | node 5: GPU2: " "$dir/refused.err" || fail "refusal: $(cat "$dir/refused.err")"
if ls "$dir"/store/*.toml > /dev/null 2>&1; then fail "a profile was written"; fi

# shellcheck disable=SC2086
$tune $faults --exclude-unhealthy > "$dir/excluded.out" 2>&1 || fail "tune --exclude-unhealthy: $(cat "$dir/excluded.out")"
profile=$(ls "$dir"/store/*.toml)
grep -q 'health = "8 node(s) checked by check (simulated): 2 blocking, excluded (--exclude-unhealthy)"' "$profile" ||
  fail "profile health: $(cat "$profile")"
grep -q 'excluded_nodes = \["node 3: mlx5_1 nic_bandwidth_low", "node 5: GPU2 gpu_bandwidth_low"\]' "$profile" ||
  fail "profile excluded_nodes: $(grep excluded "$profile")"
grep -q '^nodes = 6$' "$profile" || fail "profile nodes: $(grep nodes "$profile")"
echo "check and tune's health gate: ok"
