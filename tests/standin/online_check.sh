#!/usr/bin/env bash
# The online loop on the stand-in (docs/online.md): the plugin as NCCL's profiler too, its telemetry,
# exploration identical on every rank, and `learn`. Modes:
#   learn    2 nodes x 1: a profile with one wrong rule (Ring/LL on 2 channels at 16 MiB, nearly 3x slower than
#            NCCL's own choice) under `nccl-autotune run`: the telemetry shows it, `learn` publishes a version
#            without it, and the same job then takes less virtual time.
#   explore  2 nodes x 2, three communicators of different shapes (the world, each node's, across nodes),
#            thousands of calls with [online] explore = 0.05: the stand-in's rank-agreement check never
#            fires, every rank of a communicator explored the same calls, within the fraction and the range.
#   store    an unwritable store (a file where its folder should be): the job finishes, one WARN per rank.
#   killed   ranks killed while they write telemetry every second: no file is ever half-written (learn reads
#            every one), temporaries are not taken for telemetry.
#   absent   a profile without [online], the plugin named as profiler by hand: no event is activated and
#            every decision is the same as with NCCL_PROFILER_PLUGIN=none; the launcher sets no profiler.
#   prometheus  a job's telemetry through `metrics`, node exporter and a real Prometheus, read back from
#            its HTTP API with the telemetry's values (skips without prometheus).
# Usage: online_check.sh BUILD_DIR PLUGIN MODE
. "$(dirname "$0")/lib.sh"
need_mpirun
plugin=$2
mode=$3
store=$work/store
mkdir -p "$store"
export NCCL_AUTOTUNE_STORE=$store

# profile FILE [online lines] [rule lines]: a stand-in profile for cluster standin-online.
profile() {
  cat >"$1" <<TOML
# Hand-written for online_check.sh.
schema = 1

[cluster]
name = "standin-online"
fingerprint = ""
gpu_model = ""
gpus_per_node = 0
nodes = 2
nics_per_node = 0

[provenance]
created = "2026-01-01T00:00:00Z"
tool_version = "0.1.0"
nccl_version = "2.28.9"
source = "standin"
command = "hand-written test profile"

[env]
$2
$3
TOML
}
# prometheus: a stand-in job's telemetry, through `metrics`, node exporter's text-file collector and a real
# Prometheus on localhost (scraping every second), read back from Prometheus' HTTP API with the values the
# telemetry holds; prints how long after `metrics` ran the series could be queried.
prometheus_check() {
  command -v prometheus >/dev/null && command -v prometheus-node-exporter >/dev/null ||
    { echo "SKIP: prometheus or prometheus-node-exporter not installed (Debian packages; scripts/install-deps.sh)"; exit 77; }
  use_standin --ranks-per-node 1 --nodes 2
  local p=$store/standin-online-nccl2.28.toml textfile=$work/textfile ports
  profile "$p" $'[online]\ntelemetry = true' '[[rule]]
collective = "allreduce"
min_bytes = "1M"
max_bytes = "1M"
algorithm = "ring"
protocol = "simple"
busbw_gbps = 500'
  NCCL_AUTOTUNE_JOB_ID=e2e mpi -np 2 "$exe" run --profile "$p" -- "$job" --sizes 1M --iters 40 >"$work/job.txt" 2>&1 ||
    { cat "$work/job.txt"; fail "the stand-in job failed"; }
  [ "$(ls "$store"/telemetry/*.telemetry 2>/dev/null | wc -l)" -eq 2 ] || fail "no telemetry of 2 ranks: $(ls -a "$store/telemetry")"
  mkdir -p "$textfile"
  ports=$(python3 -c 'import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')
  read -r exporter_port prom_port <<<"$ports"
  prometheus-node-exporter --web.listen-address="127.0.0.1:$exporter_port" --collector.disable-defaults \
    --collector.textfile --collector.textfile.directory="$textfile" >"$work/exporter.log" 2>&1 &
  exporter_pid=$!  # global: the EXIT trap ends it
  printf 'global: {scrape_interval: 1s, evaluation_interval: 1s}\nscrape_configs:\n  - job_name: node\n    static_configs: [{targets: ["127.0.0.1:%s"]}]\n' \
    "$exporter_port" >"$work/prometheus.yml"
  prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
    --web.listen-address="127.0.0.1:$prom_port" >"$work/prometheus.log" 2>&1 &
  prom_pid=$!
  trap 'kill $exporter_pid $prom_pid 2>/dev/null; wait $exporter_pid $prom_pid 2>/dev/null; rm -rf "$work"' EXIT
  python3 - "$prom_port" <<'PY' || { cat "$work/prometheus.log"; fail "Prometheus did not get ready"; }
# Ready, and node exporter scraped once (Prometheus starts scraping a target some seconds after it starts).
import json, sys, time, urllib.request
for _ in range(300):
    try:
        url = f"http://127.0.0.1:{sys.argv[1]}/api/v1/query?query=up"
        if json.load(urllib.request.urlopen(url, timeout=1))["data"]["result"]: sys.exit(0)
    except Exception: pass
    time.sleep(0.1)
sys.exit(1)
PY
  "$exe" metrics --store "$store" --out "$textfile/nccl-autotune.prom" || fail "metrics failed"
  python3 - "$prom_port" "$store/telemetry" <<'PY' || { cat "$textfile/nccl-autotune.prom"; fail "Prometheus does not hold what the telemetry does: see above"; }
import glob, json, sys, time, urllib.parse, urllib.request
port, telemetry = sys.argv[1], sys.argv[2]
start = time.time()
def query(q):
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": q})
    return json.load(urllib.request.urlopen(url, timeout=2))["data"]["result"]
# What the telemetry holds: per choice, calls and their count-weighted median time and size.
choices, calls = {}, 0
for f in glob.glob(f"{telemetry}/*.telemetry"):
    for line in open(f):
        w = line.split()
        if w[0] != "row": continue
        c, b, p50 = int(w[9]), float(w[10]), float(w[13])
        calls += c
        if w[1:6] != ["2", "2", "1", "allreduce", "20"]: continue
        k = tuple(w[6:9])
        n, sb, sp = choices.get(k, (0, 0.0, 0.0))
        choices[k] = (n + c, sb + c * b, sp + c * p50)
# Bus bandwidth over 2 ranks: bytes / time; the metric weighs each choice's by its calls.
assert choices, "no AllReduce row of 1 MiB at 2x1 in the telemetry"
bucket_calls = sum(n for n, _, _ in choices.values())
busbw = sum(n * (sb / n) / (sp / n) * 1e6 for n, sb, sp in choices.values()) / bucket_calls
series = 'nccl_autotune_production_busbw_bytes_per_second{cluster="standin-online",shape="2x1",collective="allreduce",size_bucket="1048576"}'
while time.time() - start < 30:
    got = query(series)
    if got: break
    time.sleep(0.05)
else:
    sys.exit(f"{series} not in Prometheus 30 s after metrics ran")
delay = time.time() - start
print(f"the series could be queried {delay:.2f} s after metrics ran (scrape interval 1 s)")
# One scrape interval, and the slack of a busy machine (the query loop, the scrape's own time).
assert delay < 2.5, f"{delay:.2f} s from metrics to Prometheus, over a scrape interval and its slack"
value = float(got[0]["value"][1])
assert abs(value - busbw) <= busbw * 1e-6, f"production busbw {value}, the telemetry's {busbw}"
pending = float(query('nccl_autotune_telemetry_pending_calls{cluster="standin-online"}')[0]["value"][1])
assert pending == calls, f"pending calls {pending}, the telemetry's {calls}"
expected = float(query('nccl_autotune_expected_busbw_bytes_per_second{cluster="standin-online",size_bucket="1048576"}')[0]["value"][1])
assert expected == 500e9, f"expected busbw {expected}, the rule's 500e9"
print(f"Prometheus holds {value / 1e9:.4f} GB/s over {bucket_calls} calls at 1 MiB, {calls} pending, as the telemetry")
PY
}
virtual_us() { sed -n 's/^job: AllReduce 16777216 B: \([0-9.]*\) us.*/\1/p' "$1"; }

case $mode in
learn)
  use_standin --ranks-per-node 1 --nodes 2
  NCCL_TUNER_PLUGIN=none mpi -np 2 "$job" --sizes 16M --iters 40 >"$work/nccl.txt" 2>&1 ||
    { cat "$work/nccl.txt"; fail "the job without a tuner failed"; }
  nccl_us=$(virtual_us "$work/nccl.txt")
  # What the calibration would have recorded for NCCL's default there: 16 MiB / time (busbw = algbw on 2 ranks).
  default_busbw=$(awk -v t="$nccl_us" 'BEGIN { printf "%.4f", 16777216 / (t * 1000) }')
  p=$store/standin-online-nccl2.28.toml
  profile "$p" $'[online]\ntelemetry = true' "[[rule]]
collective = \"allreduce\"
min_bytes = \"16M\"
max_bytes = \"16M\"
algorithm = \"ring\"
protocol = \"ll\"
channels = 2
busbw_gbps = $default_busbw
default_busbw_gbps = $default_busbw"
  "$exe" env --profile "$p" | grep -q "NCCL_PROFILER_PLUGIN=" || fail "run would not set NCCL_PROFILER_PLUGIN for a profile with [online]"
  NCCL_AUTOTUNE_JOB_ID=wrong mpi -np 2 "$exe" run --profile "$p" -- "$job" --sizes 16M --iters 40 >"$work/wrong.txt" 2>&1 ||
    { cat "$work/wrong.txt"; fail "the job with the wrong rule failed"; }
  wrong_us=$(virtual_us "$work/wrong.txt")
  n=$(ls "$store"/telemetry/*-wrong-*.telemetry 2>/dev/null | wc -l)
  [ "$n" -eq 2 ] || fail "$n telemetry files for 2 ranks: $(ls -a "$store/telemetry")"
  grep -hq "^row 2 2 1 allreduce 24 ring ll 2 40 " "$store"/telemetry/*.telemetry ||
    { cat "$store"/telemetry/*.telemetry; fail "the telemetry does not show the rule's Ring/LL/2 at 16 MiB, 40 calls"; }
  # One job of one user: the store's owner lets that count (the default needs 2 jobs of 2 users).
  "$exe" learn "$p" --dry-run --format json >"$work/dry.json" 2>"$work/dry.err" || fail "learn --dry-run failed"
  grep -q '"held_back": \[$' "$work/dry.json" && grep -q "needs 2 jobs of 2 users" "$work/dry.json" ||
    { cat "$work/dry.json"; fail "one job of one user was counted by default"; }
  "$exe" learn "$p" --dry-run --format json --min-jobs 1 --min-users 1 >"$work/dry.json" || fail "learn --dry-run failed"
  grep -q '"kind": "dropped"' "$work/dry.json" || { cat "$work/dry.json"; fail "learn --dry-run does not drop the wrong rule"; }
  [ "$(ls "$store"/telemetry/*.telemetry | wc -l)" -eq 2 ] || fail "--dry-run moved the telemetry"
  "$exe" learn "$p" --min-jobs 1 --min-users 1 >"$work/learn.txt" || { cat "$work/learn.txt"; fail "learn failed"; }
  cat "$work/learn.txt"
  grep -q "dropped: allreduce" "$work/learn.txt" || fail "learn did not say it dropped the rule"
  grep -q "published " "$work/learn.txt" || fail "learn published no version"
  grep -q "^\[\[rule\]\]" "$p" && fail "the new version still has the wrong rule"
  ls "$store"/versions/standin-online-nccl2.28-*.toml >/dev/null || fail "no versioned copy in the store"
  grep -q '"source":"production"' "$store"/standin-online-nccl2.28.journal.jsonl || fail "no production records in the journal"
  NCCL_AUTOTUNE_JOB_ID=learned mpi -np 2 "$exe" run --profile "$p" -- "$job" --sizes 16M --iters 40 >"$work/learned.txt" 2>&1 ||
    { cat "$work/learned.txt"; fail "the job under the learned version failed"; }
  learned_us=$(virtual_us "$work/learned.txt")
  echo "virtual time per AllReduce of 16 MiB: NCCL $nccl_us us, wrong rule $wrong_us us, after learn $learned_us us"
  awk -v a="$learned_us" -v b="$wrong_us" 'BEGIN { exit !(a * 2 < b) }' || fail "the learned version is not faster"
  ;;
explore)
  use_standin --ranks-per-node 2 --nodes 2
  p=$work/explore.toml
  # One range everywhere (no shape named: every communicator gets it), its runner-up close.
  profile "$p" $'[online]\ntelemetry = true\nexplore = 0.05' '[[rule]]
collective = "allreduce"
min_bytes = "256K"
max_bytes = "256K"
algorithm = "ring"
protocol = "ll"
channels = 0
busbw_gbps = 5.6
runner_up = "ring/ll128/0"
runner_up_busbw_gbps = 6.0'
  NCCL_AUTOTUNE_JOB_ID=explore mpi -np 4 "$exe" run --profile "$p" -- "$job" --sizes 64K,256K --iters 500 --split 1 \
    >"$work/explore.txt" 2>&1 || { cat "$work/explore.txt"; fail "the exploring job failed"; }
  grep -q "ranks disagree" "$work/explore.txt" && fail "ranks disagreed"
  files=("$store"/telemetry/*-explore-*.telemetry)
  [ "${#files[@]}" -eq 4 ] || fail "${#files[@]} telemetry files for 4 ranks"
  # Per file and shape: calls in all, calls explored (the runner-up at 256 KiB), and how many choices ran
  # outside the rule's range (one: NCCL's own, never an explored one).
  for f in "${files[@]}"; do
    awk '$1 == "row" { shape = $2 "x" $4; total[shape] += $10
                       if ($6 == 18 && $8 == "ll128") ex[shape] += $10
                       if ($6 != 18) out[shape] += 1 }
         END { for (s in total) printf "%s %d %d %d\n", s, total[s], ex[s], out[s] }' "$f" | sort >"$f.sum"
    cat "$f.sum"
    [ "$(wc -l <"$f.sum")" -eq 3 ] || fail "$f: expected three communicator shapes"
    while read -r shape total explored outside; do
      [ "$total" -eq 1000 ] || fail "$f: $shape saw $total calls, expected 1000"
      [ "$explored" -gt 0 ] || fail "$f: $shape explored nothing"
      [ "$explored" -le 50 ] || fail "$f: $shape explored $explored of 1000 calls, above 0.05"
      [ "$outside" -eq 1 ] || fail "$f: $shape ran $outside choices outside the rule's range, expected NCCL's one"
    done <"$f.sum"
  done
  # Every rank of the world communicator explored the same number of calls (the same calls: the check
  # above that no rank disagreed is per call).
  [ "$(for f in "${files[@]}"; do grep '^2x2 ' "$f.sum"; done | sort -u | wc -l)" -eq 1 ] || fail "the world's ranks explored differently"
  ;;
store)
  use_standin --ranks-per-node 1 --nodes 2
  p=$work/p.toml
  profile "$p" $'[online]\ntelemetry = true' ""
  echo "a file where the store should be" >"$work/not-a-store"
  NCCL_AUTOTUNE_STORE=$work/not-a-store NCCL_AUTOTUNE_TELEMETRY_INTERVAL=1 NCCL_DEBUG=WARN \
    mpi -np 2 "$exe" run --profile "$p" -- "$job" --sizes 1M --iters 200 >"$work/store.txt" 2>&1 ||
    { cat "$work/store.txt"; fail "the job failed with an unwritable store"; }
  grep -q "job total" "$work/store.txt" || fail "the job did not finish"
  n=$(grep -c "telemetry not written" "$work/store.txt")
  [ "$n" -eq 2 ] || { cat "$work/store.txt"; fail "$n WARN lines about telemetry, expected one per rank (2)"; }
  ;;
killed)
  use_standin --ranks-per-node 1 --nodes 2
  p=$store/standin-online-nccl2.28.toml
  profile "$p" $'[online]\ntelemetry = true' ""
  ln -s "$job" "$work/killed_job"
  for round in 1 2 3; do
    NCCL_AUTOTUNE_JOB_ID=killed$round NCCL_AUTOTUNE_TELEMETRY_INTERVAL=1 \
      mpi -np 2 "$exe" run --profile "$p" -- "$work/killed_job" --sizes 64K,1M --iters 100000 >/dev/null 2>&1 &
    for _ in $(seq 1 100); do
      ls "$store"/telemetry/*-killed$round-*.telemetry >/dev/null 2>&1 && break
      sleep 0.1
    done
    sleep "0.$((round * 3))"
    pids=$(pgrep -f "$work/killed_job" || true)
    [ -n "$pids" ] || fail "round $round: no rank to kill"
    kill -9 $pids
    wait
  done
  ls -a "$store/telemetry"
  n=$(ls "$store"/telemetry/*.telemetry | wc -l)
  [ "$n" -ge 3 ] || fail "only $n telemetry files were written"
  "$exe" learn "$p" --dry-run >"$work/learn.txt" 2>&1 || { cat "$work/learn.txt"; fail "learn failed on what the killed writers left"; }
  cat "$work/learn.txt"
  grep -q "refused" "$work/learn.txt" && fail "learn refused what the killed writers left"
  ;;
absent)
  use_standin --ranks-per-node 1 --nodes 2
  p=$work/plain.toml
  profile "$p" "" '[[rule]]
collective = "allreduce"
min_bytes = "64K"
max_bytes = "1M"
algorithm = "ring"
protocol = "ll"
channels = 4'
  "$exe" env --profile "$p" | grep -q NCCL_PROFILER_PLUGIN && fail "run sets NCCL_PROFILER_PLUGIN for a profile without [online]"
  for profiler in "$plugin" none; do
    NCCL_PROFILER_PLUGIN=$profiler NCCL_TUNER_PLUGIN=$plugin NCCL_AUTOTUNE_PROFILE=$p NCCL_DEBUG=INFO \
      NCCL_DEBUG_SUBSYS=INIT,TUNING NCCL_DEBUG_FILE="$work/$(basename "$profiler").%p.log" \
      mpi -np 2 "$job" --sizes 16K,64K,256K,1M,4M --iters 3 >"$work/out.txt" 2>&1 || { cat "$work/out.txt"; fail "job failed"; }
  done
  on=$(basename "$plugin")
  grep -h "profiler autotune (v5) from .*, events 0x0" "$work/$on".*.log >/dev/null || { cat "$work/$on".*.log | grep -i profiler; fail "the plugin was not loaded as profiler, or activated events"; }
  grep -h "Profiler event mask: 0x0" "$work/$on".*.log >/dev/null || fail "the event mask is not 0"
  diff <(grep -ho "AllReduce: [0-9]* Bytes -> Algo [0-9] proto [0-9] time [0-9.]* channels [0-9]*" "$work/$on".*.log | sort) \
    <(grep -ho "AllReduce: [0-9]* Bytes -> Algo [0-9] proto [0-9] time [0-9.]* channels [0-9]*" "$work/none".*.log | sort) ||
    fail "decisions differ with the plugin as profiler"
  [ -z "$(ls -A "$store")" ] || fail "telemetry was written without [online]"
  # NCCL's lookup: 2.30 takes ncclProfiler_v6 first; a lib*.so name is opened as given (from the library
  # path), while a bare name would be looked for as libnccl-profiler-NAME.so.
  NCCL_STANDIN_VERSION=2.30.7 NCCL_AUTOTUNE_OTHER_NCCL=apply LD_LIBRARY_PATH="$(dirname "$plugin"):$LD_LIBRARY_PATH" \
    NCCL_PROFILER_PLUGIN=$(basename "$plugin") NCCL_TUNER_PLUGIN=$plugin NCCL_AUTOTUNE_PROFILE=$p NCCL_DEBUG=INFO \
    NCCL_DEBUG_SUBSYS=INIT NCCL_DEBUG_FILE="$work/v6.%p.log" mpi -np 2 "$job" --sizes 64K --iters 1 >"$work/out.txt" 2>&1 ||
    { cat "$work/out.txt"; fail "job failed under 2.30"; }
  grep -hq "profiler autotune (v6) from $(basename "$plugin")" "$work"/v6.*.log || fail "2.30 did not take ncclProfiler_v6 by its file name"
  NCCL_PROFILER_PLUGIN=autotune NCCL_TUNER_PLUGIN=$plugin NCCL_AUTOTUNE_PROFILE=$p NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT \
    NCCL_DEBUG_FILE="$work/bare.%p.log" mpi -np 2 "$job" --sizes 64K --iters 1 >"$work/out.txt" 2>&1 || fail "job failed"
  grep -hq "PROFILER/Plugin: libnccl-profiler-autotune.so: " "$work"/bare.*.log || fail "a bare name was not retried as libnccl-profiler-NAME.so"
  ;;
prometheus)
  prometheus_check
  ;;
*)
  echo "usage: online_check.sh BUILD_DIR PLUGIN learn|explore|store|killed|absent|prometheus" >&2
  exit 2
  ;;
esac
echo "online $mode: ok"
