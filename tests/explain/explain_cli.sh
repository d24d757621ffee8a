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
# Every kind of a job's communicators at once: collectives through the plugin, point-to-point said to have no
# rule. 16 nodes x 8 (the profile's [cluster]), TP 8, PP 4, DP 4: PP and DP groups are 4x1, embedding 2x1.
out=$("$bin" explain --profile "$dir/p.toml" --parallelism tp=8,pp=4,dp=4 --nodes 16 --collective allreduce 2>&1) ||
  fail "layout: exit $?: $out"
grep -q "^layout tp=8,pp=4,dp=4 on 16 nodes x 8 GPUs: 4 kinds of communicator$" <<<"$out" || fail "layout: $out"
grep -q "^== tensor parallel, 16 groups of 1x8 (8 ranks): allreduce+allgather+reducescatter$" <<<"$out" ||
  fail "layout: no tensor kind: $out"
grep -q "^== data parallel, 32 groups of 4x1 (4 ranks): allreduce+reducescatter+allgather$" <<<"$out" ||
  fail "layout: no data kind: $out"
grep -A1 "^== pipeline parallel, 32 groups of 4x1 (4 ranks): sendrecv$" <<<"$out" |
  grep -q "^sendrecv: no per-call rule exists (NCCL asks no tuner for point-to-point operations; process-wide" ||
  fail "layout: pipeline kind without its no-rule line: $out"
grep -q "^== pipeline embedding, 32 groups of 2x1 (2 ranks): allreduce$" <<<"$out" || fail "layout: embedding: $out"
grep -A2 "^== pipeline parallel, 32 groups of 4x1 (4 ranks): sendrecv$" <<<"$out" |
  grep -q "^process-wide: NCCL's defaults (the profile's \[env\] holds no point-to-point setting)$" ||
  fail "layout: the pipeline kind does not say what steers it: $out"
# Three kinds with a collective: three explanations, each with the profile's two rules.
(( $(grep -c "^communicator: " <<<"$out") == 3 )) || fail "layout: expected 3 communicators explained: $out"
(( $(grep -Ec "^ +1000 - 65535 .* profile +tree/ll" <<<"$out") == 3 )) || fail "layout: rules per kind: $out"
json=$("$bin" explain --profile "$dir/p.toml" --parallelism tp=8,pp=4,dp=4 --nodes 16 --format json) ||
  fail "layout json: exit $?"
grep -q '"no_rule": \[$' <<<"$json" || fail "layout json: no no_rule list"
grep -q '"explanation": null' <<<"$json" || fail "layout json: the pipeline kind has no explanation"
"$bin" explain --profile "$dir/p.toml" --parallelism tp=8,pp=4,dp=4 --nodes 8 >"$dir/out" 2>"$dir/err"
(( $? == 2 )) || fail "layout not filling the job: expected exit 2"
grep -q "tp x cp x pp x dp = 128 must equal the job's 8 x 8 = 64 ranks" "$dir/err" || fail "layout: $(cat "$dir/err")"

# A profile calibrated for a layout names the groups a shape serves, and what no rule steers on them.
cat "$dir/p.toml" - >"$dir/layout.toml" <<'TOML'
[layout]
parallelism = "tp=8,pp=2,dp=2"
[[layout.group]]
kind = "dp"
nodes = 2
ranks = 2
groups = 16
operations = ["allreduce", "reducescatter", "allgather"]
[[layout.group]]
kind = "pp"
nodes = 2
ranks = 2
groups = 16
operations = ["sendrecv"]
TOML
chmod 600 "$dir/layout.toml"
out=$("$bin" explain --profile "$dir/layout.toml" --nodes 2 --ranks 2 --collective allreduce 2>&1) ||
  fail "serves: exit $?: $out"
grep -q "^serves: data parallel, 16 groups; pipeline parallel, 16 groups of the layout tp=8,pp=2,dp=2 the profile" \
  <<<"$out" || fail "serves: $out"
grep -q "^  sendrecv: no per-call rule exists .*\[pipeline parallel\]$" <<<"$out" || fail "serves: no-rule line: $out"
out=$("$bin" explain --profile "$dir/layout.toml" --nodes 1 --ranks 8 --collective allreduce 2>&1) ||
  fail "serves none: exit $?: $out"
grep -q "^serves: no group of the layout tp=8,pp=2,dp=2" <<<"$out" || fail "serves none: $out"
# A point-to-point setting the calibration of that layout exported: said beside every point-to-point kind.
sed '0,/^\[\[rule\]\]$/s//[env]\nNCCL_PXN_DISABLE = "1"\n[[rule]]/' "$dir/layout.toml" | sed 's/^parallelism = "tp=8,pp=2,dp=2"$/&\np2p_env = ["NCCL_PXN_DISABLE"]/' >"$dir/p2p.toml"
chmod 600 "$dir/p2p.toml"
out=$("$bin" explain --profile "$dir/p2p.toml" --parallelism tp=8,pp=4,dp=4 --nodes 16 --collective allreduce 2>&1) ||
  fail "p2p env: exit $?: $out"
grep -A2 "^== pipeline parallel, 32 groups of 4x1 (4 ranks): sendrecv$" <<<"$out" |
  grep -q "^process-wide: NCCL_PXN_DISABLE=1 (the profile's \[env\], chosen for the point-to-point traffic of tp=8,pp=2,dp=2)$" ||
  fail "p2p env: $out"
echo "explain: ok"
