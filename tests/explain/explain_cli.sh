#!/usr/bin/env bash
# `nccl-autotune explain` end to end: a profile with known rules gives exactly their byte edges in text and
# JSON, NCCL's own choices are labelled modelled, and a broken profile exits 2 with one file:line line.
# Argument: the nccl-autotune binary.
set -uo pipefail
bin=$1
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cat >"$dir/p.toml" <<'TOML'
schema = 1
[cluster]
name = "explain-cli"
gpu_model = "NVIDIA H100 80GB HBM3"
gpus_per_node = 8
nics_per_node = 8
[provenance]
created = "2026-12-01T00:00:00Z"
nccl_version = "2.30.7"
source = "simulated"
[[rule]]
collective = "allreduce"
min_bytes = 1000
max_bytes = 65535
algorithm = "tree"
protocol = "ll"
channels = 4
[[rule]]
collective = "allreduce"
min_bytes = "1M"
max_bytes = 8388607
algorithm = "ring"
protocol = "simple"
chunk_bytes = "1M"
TOML
chmod 600 "$dir/p.toml"

out=$("$bin" explain --profile "$dir/p.toml" --nodes 2 --ranks 16 --collective allreduce 2>&1) ||
  fail "exit $?: $out"
grep -q "NCCL's own choices are modelled, not measured" <<<"$out" || fail "no modelled label: $out"
# --ranks is the communicator's total, not per node: the header says both, so 2 x 16 is not read as 32.
grep -q "^communicator: 16 ranks on 2 nodes (8 per node)," <<<"$out" || fail "header: $out"
grep -Eq "^ +1000 - 65535 .* profile +tree/ll +channels 4$" <<<"$out" || fail "no tree/ll 1000-65535: $out"
grep -Eq "^ +1048576 - 8388607 .* profile +ring/simple +chunk 1M$" <<<"$out" || fail "no ring 1M-8M: $out"
grep -Eq "^ +0 - 999 .* NCCL \(modelled\)" <<<"$out" || fail "no modelled range below the first rule: $out"
(( $(grep -Ec "^ +[0-9]+ - [0-9]+ .* profile " <<<"$out") == 2 )) || fail "expected exactly two profile ranges: $out"

json=$("$bin" explain --profile "$dir/p.toml" --nodes 2 --ranks 16 --collective allreduce --format json) ||
  fail "json: exit $?"
grep -q '"first": 1000,' <<<"$json" || fail "json: no first 1000"
grep -q '"last": 65535' <<<"$json" || fail "json: no last 65535"
grep -q '"chunk_bytes": 1048576' <<<"$json" || fail "json: no chunk"
grep -q '"source": "modelled"' <<<"$json" || fail "json: model not labelled"

sed 's/algorithm = "tree"/algorithm = "trea"/' "$dir/p.toml" >"$dir/bad.toml"
"$bin" explain --profile "$dir/bad.toml" --nodes 2 --ranks 16 >"$dir/out" 2>"$dir/err"
rc=$?
((rc == 2)) || fail "bad profile: exit $rc, expected 2"
grep -q "bad.toml:15: rule\[1\].algorithm: expected one of" "$dir/err" || fail "bad profile: $(cat "$dir/err")"
(( $(wc -l <"$dir/err") == 1 )) || fail "more than one stderr line"
[[ ! -s $dir/out ]] || fail "output before the error: $(cat "$dir/out")"
echo "explain: ok"
