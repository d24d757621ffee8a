#!/usr/bin/env bash
# `nccl-autotune metrics` end to end: bad usage refused with one line and exit 2 before anything is written;
# a store with a profile, a job's telemetry and upkeep records gives the series the telemetry holds; the file
# is replaced atomically (no temporary left beside it, never a .prom half written); `promtool check metrics`
# accepts the output, `promtool check rules` the shipped alerting rules and `promtool test rules` shows them
# firing on such series (tests/metrics/alerts_test.yml). Without promtool (Debian: prometheus) the promtool
# part skips (exit 77) after the rest passed.
# Usage: metrics_cli.sh NCCL_AUTOTUNE SOURCE_DIR
set -uo pipefail
bin=$1
src=$2
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
umask 022
fail() { echo "FAIL: $*"; exit 1; }
store=$dir/store
out=$dir/textfile
mkdir -p "$store" "$out"

# Bad usage: one line, exit 2, nothing written.
expect_bad() {
  local want=$1
  shift
  "$bin" metrics "$@" >"$dir/stdout" 2>"$dir/stderr"
  local rc=$?
  [ $rc = 2 ] || fail "metrics $*: exit $rc, expected 2"
  [ "$(wc -l <"$dir/stderr")" = 1 ] || fail "metrics $*: expected one stderr line, got: $(cat "$dir/stderr")"
  grep -qF -- "$want" "$dir/stderr" || fail "metrics $*: expected '$want' in: $(cat "$dir/stderr")"
}
expect_bad "--out: expected a name ending in .prom" --store "$store" --out "$out/x.txt"
expect_bad "--out: expected an existing folder" --store "$store" --out "$dir/none/x.prom"
expect_bad "--window: expected a duration" --store "$store" --out "$out/x.prom" --window soon
expect_bad "--store: expected a profile store folder" --store "$dir/nostore" --out "$out/x.prom"
expect_bad "--out: expected a file" --store "$store"
[ -z "$(ls -A "$out")" ] || fail "bad usage left files: $(ls -A "$out")"

cat >"$dir/profile.toml" <<'EOF_PROFILE'
schema = 1

[cluster]
name = "opscluster"

[provenance]
created = "2026-01-01T00:00:00Z"
tool_version = "0.1.0"
nccl_version = "2.28.9"
source = "measured"

[[rule]]
collective = "allreduce"
min_bytes = "512K"
max_bytes = "2M"
algorithm = "ring"
protocol = "ll"
nodes = 2
ranks = 16
busbw_gbps = 110
default_busbw_gbps = 100
EOF_PROFILE
"$bin" profile import "$dir/profile.toml" --store "$store" >/dev/null || fail "profile import"
digest=$("$bin" env --store "$store" --cluster opscluster --format json | sed -n 's/^  "digest": "\([0-9a-f]*\)",$/\1/p')
[ ${#digest} = 16 ] || fail "no digest from env: '$digest'"
# One job's telemetry, as the plugin writes it (docs/online.md): Ring/LL at 1 MiB, 200 calls, a median of
# 24.576 us, which is 80 GB/s of bus bandwidth over 16 ranks.
mkdir -p "$store/telemetry"
cat >"$store/telemetry/$digest-job1-0.telemetry" <<EOF_T
# nccl-autotune telemetry: GPU times per choice NCCL ran (docs/online.md)
telemetry 1
digest $digest
cluster opscluster
nccl 2.28.9
job job1
rank 0
host n1
written $(date +%s)
dropped 0
row 2 16 8 allreduce 20 ring ll 8 200 1048576 24.576 23.5 24.576 25.6 26 27 22 30
end 1
EOF_T
mkdir -p "$store/status"
cat >"$store/status/check-n2.toml" <<EOF_C
command = "check"
subject = "n2"
result = "block"
time = $(date +%s)
detail = "mlx5_1 at half rate"

[facts]
drained = "true"
EOF_C
cat >"$store/status/verify-opscluster.toml" <<EOF_V
command = "verify"
subject = "opscluster"
result = "ok"
time = $(date +%s)
detail = "1 still win, 0 no longer win, 0 now lose, 0 not checked"

[facts]
driver = "550.54.15"
nccl = "2.28.9"
EOF_V

"$bin" metrics --store "$store" --out "$out/nccl-autotune.prom" 2>"$dir/stderr" || fail "metrics: exit $?: $(cat "$dir/stderr")"
[ "$(ls -A "$out")" = "nccl-autotune.prom" ] || fail "expected the .prom alone in the folder: $(ls -A "$out")"
prom=$out/nccl-autotune.prom
series='{cluster="opscluster",nccl="2.28",shape="2x8",collective="allreduce",size_bucket="1048576"}'
# value SERIES: its value in the file (within a millionth of WANT), else a failure naming what is there.
near() {
  awk -v s="$1" -v want="$2" '
    index($0, s " ") == 1 { v = substr($0, length(s) + 2); found = 1; ok = (v - want) ^ 2 <= (want * 1e-6) ^ 2 }
    END { exit !(found && ok) }' "$prom" || fail "$1: expected $2; the file has: $(grep -F "${1%%\{*}" "$prom")"
}
near "nccl_autotune_production_busbw_bytes_per_second$series" 80e9
near "nccl_autotune_expected_busbw_bytes_per_second$series" 110e9
near "nccl_autotune_calls_decided_ratio${series%\}},decided_by=\"rule\"}" 1
grep -qxF "nccl_autotune_profile_info{cluster=\"opscluster\",nccl=\"2.28\",digest=\"$digest\",source=\"measured\"} 1" "$prom" ||
  fail "profile info: $(grep profile_info "$prom")"
grep -qxF 'nccl_autotune_telemetry_pending_calls{cluster="opscluster",nccl="2.28"} 200' "$prom" || fail "pending calls"
grep -qxF 'nccl_autotune_check_node_drained{node="n2"} 1' "$prom" || fail "drained node"
# A second run replaces the file (a reader holding the first one keeps reading it whole).
before=$(stat -c %i "$prom")
"$bin" metrics --store "$store" --out "$prom" || fail "second metrics run"
[ "$(ls -A "$out")" = "nccl-autotune.prom" ] || fail "a temporary was left: $(ls -A "$out")"
[ "$(stat -c %i "$prom")" != "$before" ] || fail "the file was rewritten in place, not renamed over"

# Every metric written is documented, and the shipped dashboard and alerts use only metrics that are written.
python3 - "$prom" "$src" <<'PY' || fail "metric names: see above"
import json, re, sys
prom, src = sys.argv[1], sys.argv[2]
written = set(re.findall(r"^# TYPE (\S+) ", open(prom).read(), re.M))
docs = open(f"{src}/docs/operations.md").read()
used = set(re.findall(r"nccl_autotune_[a-z_]+", open(f"{src}/packaging/prometheus/alerts.yml").read()))
used |= set(re.findall(r"nccl_autotune_[a-z_]+", open(f"{src}/packaging/grafana/nccl-autotune.json").read()))
bad = [f"{m} is not documented in docs/operations.md" for m in sorted(written) if f"`{m}`" not in docs]
bad += [f"{m} is used by the dashboard or alerts but not written" for m in sorted(used - written)]
print("\n".join(bad), file=sys.stderr)
sys.exit(1 if bad else 0)
PY

command -v promtool >/dev/null || { echo "SKIP: promtool not installed (Debian: prometheus; scripts/install-deps.sh); the rest passed"; exit 77; }
promtool check metrics <"$prom" || fail "promtool check metrics: see above"
cp "$src/packaging/prometheus/alerts.yml" "$src/tests/metrics/alerts_test.yml" "$dir/"
promtool check rules "$dir/alerts.yml" || fail "promtool check rules: see above"
(cd "$dir" && promtool test rules alerts_test.yml) || fail "promtool test rules: see above"
# The dashboard's queries parse as PromQL (each as a recording rule, its template variable filled in).
python3 - "$src/packaging/grafana/nccl-autotune.json" >"$dir/dashboard_rules.yml" <<'PY' || fail "dashboard JSON"
import json, sys
d = json.load(open(sys.argv[1]))
print("groups:\n  - name: dashboard\n    rules:")
for p in d["panels"]:
    for t in p["targets"]:
        print(f"      - record: dashboard:panel{p['id']}:{t['refId']}\n        expr: {json.dumps(t['expr'].replace('$cluster', '.*'))}")
PY
promtool check rules "$dir/dashboard_rules.yml" || fail "the dashboard's queries: see above"
echo "OK: metrics refused bad usage, wrote the store's series atomically; promtool accepts them and the rules"
