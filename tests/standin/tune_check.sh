#!/usr/bin/env bash
# `nccl-autotune tune` without --simulate on the stand-in, in one process driving 8 GPUs (MODE one) or
# through the orchestrator with `--launcher "mpirun -np 2"` on two simulated nodes (MODE mpirun). The
# profile must say source = "standin" (never "measured"), validate, and hold rules that are the choices that
# measured best in its journal; a job run under it (nccl-autotune run) loads the plugin (its INFO line),
# makes exactly those choices in the stand-in NCCL, and takes less virtual time than the same job untuned.
# MODE shapes calibrates sub-communicators instead (--shapes 2x1,1x2 on 2 nodes x 2 under mpirun: the runner
# splits the job's communicator into every group of a shape, ncclCommSplit): each shape is measured, every
# group's communicator has the shape's nodes and ranks per node in the stand-in NCCL, nothing fails.
# MODE layout calibrates a mixture-of-experts layout (--parallelism tp=2,ep=2,pp=2 on 2 nodes x 4 under
# mpirun, two point-to-point settings): every group kind is measured with its own operations (tensor and
# data groups all-reduce, expert groups all-to-all, pipeline groups send/recv plus the embedding all-reduce),
# the journal names each measurement's operation, and the profile's [env] takes a point-to-point setting only
# where the journal shows it beat NCCL's default beyond the noise without slowing an all-reduce.
# Usage: tune_check.sh BUILD_DIR one|mpirun|shapes|layout
. "$(dirname "$0")/lib.sh"
mode=$2
store=$work/store
tune=(tune --store "$store" --collectives allreduce --min-bytes 256K --max-bytes 1M --strategy exhaustive --reps 2
  --check-bytes 1M)
if [ "$mode" = shapes ]; then
  need_mpirun
  use_standin --ranks-per-node 2 --nodes 2
  NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT NCCL_DEBUG_FILE="$work/nccl.%p.log" \
    "$exe" tune --store "$store" --collectives allreduce --min-bytes 256K --max-bytes 256K --strategy exhaustive --check-bytes 1M \
    --reps 2 --shapes 2x1,1x2 --launcher "mpirun -np 4" >"$work/tune.txt" 2>&1 ||
    { cat "$work/tune.txt" "$store"/*.parts/*.log; fail "tune --shapes exited with $?"; }
  cat "$work/tune.txt"
  cat "$work"/nccl.*.log >"$work/nccl.log"
  python3 - "$store"/*.journal.jsonl "$work/nccl.log" <<'PY'
import json, re, sys
records = [json.loads(l) for l in open(sys.argv[1])]
header = next(r for r in records if r.get("type") == "header")
m = [r for r in records if r.get("type") == "measurement"]
shapes = {(s["nodes"], s["ranks"]) for s in header["scales"]}
assert shapes == {(2, 2), (1, 2)}, f"the journal's shapes: {shapes}"
for shape in shapes:
    got = [r for r in m if (r["scale"]["nodes"], r["scale"]["ranks"]) == shape]
    assert got, f"nothing measured at {shape}"
    bad = [r for r in got if r["outcome"] not in ("ok", "unsupported")]
    assert not bad, f"{shape}: {[(r['candidate'], r['outcome'], r.get('detail')) for r in bad][:3]}"
    assert any(r["outcome"] == "ok" and r["candidate"].get("algorithm") is None for r in got), f"{shape}: no default"
# Every communicator the stand-in created: the job's (4 ranks, 2 nodes x 2) and the groups of each shape.
comms = set(re.findall(r"nRanks (\d+) nNodes (\d+) localRanks (\d+)", open(sys.argv[2]).read()))
for want in [("4", "2", "2"), ("2", "2", "1"), ("2", "1", "2")]:
    assert want in comms, f"no communicator of {want[0]} ranks on {want[1]} node(s) x {want[2]}: {sorted(comms)}"
print(f"OK: shapes 2x1 and 1x2 measured through split communicators ({len(m)} measurements)")
PY
  exit
fi
if [ "$mode" = layout ]; then
  need_mpirun
  use_standin --ranks-per-node 4 --nodes 2
  "$exe" tune --store "$store" --collectives allreduce --min-bytes 64K --max-bytes 128K --strategy exhaustive \
    --reps 2 --check-bytes 1M --parallelism tp=2,ep=2,pp=2 --p2p-env NCCL_P2P_NET_CHUNKSIZE=524288,NCCL_PXN_DISABLE=1 \
    --launcher "mpirun -np 8" >"$work/tune.txt" 2>&1 ||
    { rc=$?; cat "$work/tune.txt" "$store"/*.parts/*.log; fail "tune --parallelism exited with $rc"; }
  cat "$work/tune.txt"
  "$exe" profile validate "$store"/*.toml || fail "the profile does not validate"
  python3 - "$store"/*.journal.jsonl "$store"/*.toml <<'PY'
import json, sys, tomllib
records = [json.loads(l) for l in open(sys.argv[1])]
profile = tomllib.load(open(sys.argv[2], "rb"))
m = [r for r in records if r.get("type") == "measurement"]
bad = [(r.get("operation") or r.get("collective"), r["outcome"], r.get("detail")) for r in m if r["outcome"] not in ("ok", "unsupported")]
assert not bad, f"not every measurement succeeded: {bad[:3]}"
def op(r): return r.get("operation") or r["collective"]
seen = {}
for r in m:
    seen.setdefault((r["scale"]["nodes"], r["scale"]["ranks"]), set()).add(op(r))
# 2 nodes x 4, TP 2 (ranks 0-1), EP 2 inside DP 2 (stride 2, within a node), PP 2 (stride 4, across nodes).
want = {(1, 2): {"allreduce", "alltoall"}, (2, 2): {"allreduce", "sendrecv"}}
assert seen == want, f"operations per shape: {seen}, expected {want}"
assert {g["kind"] for g in profile["layout"]["group"]} == {"tp", "dp", "ep", "pp", "embedding"}, profile["layout"]
# Each setting against NCCL's defaults, from the journal: the point-to-point gain (median over sizes) and the
# worst all-reduce series. The profile must agree: in [env] exactly the settings that won and cost nothing.
def medians(job, operation):
    out = {}
    for r in m:
        if r["job"]["id"] == job and op(r) == operation and (operation != "allreduce" or r["candidate"]["algorithm"] is None):
            out[(r["scale"]["ranks"], r["scale"]["nodes"], r["bytes"])] = r["median_us"]
    return out
base_p2p, base_ar = medians("default", "sendrecv"), medians("default", "allreduce")
won = set()
for job in ("p2p:NCCL_P2P_NET_CHUNKSIZE=524288", "p2p:NCCL_PXN_DISABLE=1"):
    p2p, ar = medians(job, "sendrecv"), medians(job, "allreduce")
    gains = sorted(base_p2p[k] / p2p[k] - 1 for k in p2p)
    slower = max(ar[k] / base_ar[k] - 1 for k in ar)
    print(f"{job}: send/recv {100 * gains[len(gains) // 2]:+.1f}%, worst all-reduce {100 * slower:+.1f}%")
    if gains[0] > 0.03 and slower < 0.03:
        won.add(job.split(":")[1].split("=")[0])
assert won, "no point-to-point setting beat NCCL's default on the stand-in (PXN off should, across nodes)"
assert set(profile["env"]) - {"NCCL_SOCKET_IFNAME"} == won, f"[env] {profile['env']}, won {won}"
assert set(profile["layout"].get("p2p_env", [])) == won, profile["layout"]
print(f"OK: every group kind measured with its operations ({len(m)} measurements); [env] takes {sorted(won)}")
PY
  [ $? -eq 0 ] || fail "the layout's calibration does not match its journal"
  exit
fi
if [ "$mode" = one ]; then
  [ -x "$job" ] || need_mpirun
  use_standin
  run=()
else
  need_mpirun
  use_standin --ranks-per-node 1 --nodes 2
  tune+=(--launcher "mpirun -np 2")
  run=(mpi -np 2)
fi
"$exe" "${tune[@]}" >"$work/tune.txt" 2>&1 || {
  rc=$?
  cat "$work/tune.txt" "$store"/*.parts/*.log
  fail "tune exited with $rc"
}
cat "$work/tune.txt"
profile=$(ls "$store"/*.toml)
grep -Eq '^source *= *"standin"' "$profile" || fail "the profile does not say source = \"standin\""
"$exe" profile validate "$profile" || fail "the profile does not validate"
"$exe" profile show "$profile" | grep -q "STAND-IN: not measured on real GPUs" || fail "profile show hides the source"
journal=$(ls "$store"/*.journal.jsonl)
sizes=$(python3 -c 'import json,sys; print(",".join(str(b) for b in sorted({json.loads(l)["bytes"] for l in open(sys.argv[1]) if "\"measurement\"" in l})))' "$journal")

for how in tuned untuned; do
  (
    export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING NCCL_DEBUG_FILE="$work/$how.%p.log"
    [ "$how" = untuned ] && export NCCL_TUNER_PLUGIN=none
    "${run[@]}" "$exe" run --profile "$profile" -- "$job" --sizes "$sizes" --iters 10 >"$work/$how.txt" 2>&1
  ) || { rc=$?; cat "$work/$how.txt"; fail "the $how job exited with $rc"; }
  cat "$work"/$how.*.log >"$work/$how.log"
done
cat "$work/tuned.txt" "$work/untuned.txt"
# (The launcher hands the job the store's immutable copy of this version of the profile.)
grep -Eq "TUNER/Autotune: profile [^ ]+\.toml \(TOML[^)]*source standin[^)]*\): [1-9][0-9]* of [0-9]+ rules apply" "$work/tuned.log" ||
  fail "no INFO line of the plugin with the profile's rules in the tuned job's NCCL log"

python3 - "$profile" "$journal" "$work" <<'PY'
import json, re, sys, tomllib
profile, journal, work = sys.argv[1:4]
rules = tomllib.load(open(profile, "rb")).get("rule", [])
assert rules, "the calibration found no rule: nothing to check the plugin against"
size = lambda s: int(s[:-1]) << {"K": 10, "M": 20, "G": 30}[s[-1]] if isinstance(s, str) and s[-1] in "KMG" else int(s)
best = {}
for line in open(journal):
    r = json.loads(line)
    if r.get("type") != "measurement" or r["outcome"] != "ok" or r["collective"] != "allreduce":
        continue
    cand = r["candidate"]
    key = (cand.get("algorithm"), cand.get("protocol"))
    if best.get(r["bytes"], (None, 1e300))[1] > r["median_us"]:
        best[r["bytes"]] = (key, r["median_us"])
ids = {"tree": "0", "ring": "1", "collnetdirect": "2", "collnetchain": "3", "nvls": "4", "nvlstree": "5", "pat": "6"}
protos = {"ll": "0", "ll128": "1", "simple": "2"}
chosen = {int(b): (a, p) for b, a, p in re.findall(r"AllReduce: (\d+) Bytes -> Algo (\d) proto (\d)", open(f"{work}/tuned.log").read())}
checked = 0
for bytes_, (key, _) in sorted(best.items()):
    rule = next((r for r in rules if size(r["min_bytes"]) <= bytes_ <= size(r["max_bytes"])), None)
    if rule is None:
        continue
    assert key == (rule["algorithm"], rule["protocol"]), f"{bytes_} B: the rule says {rule['algorithm']}/{rule['protocol']}, the best measured was {key}"
    assert chosen.get(bytes_) == (ids[rule["algorithm"]], protos[rule["protocol"]]), f"{bytes_} B: the stand-in chose {chosen.get(bytes_)}, the rule says {rule}"
    checked += 1
assert checked, "no measured size lies in a rule"
total = lambda how: float(re.search(r"job total: ([0-9.]+) us virtual", open(f"{work}/{how}.txt").read()).group(1))
assert total("tuned") < total("untuned"), f"tuned {total('tuned')} us is not faster than untuned {total('untuned')} us"
print(f"OK: {len(rules)} rule(s), the best measured at {checked} size(s), applied by the plugin in the stand-in; "
      f"job {total('tuned'):.2f} us tuned vs {total('untuned'):.2f} us untuned (virtual)")
PY
