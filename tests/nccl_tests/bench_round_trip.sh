#!/bin/sh
# `nccl-autotune bench` prints nccl-tests' table and `import-nccl-tests` reads it back: the same simulated run
# printed as a table and as JSON, the table imported into a journal, and every imported record compared with
# the JSON's halves (times to the table's two decimals, candidate, scale, what NCCL ran, the simulated label).
# Then the same for the point-to-point operations (nothing forced), which come back as records of their
# operation.
# Usage: bench_round_trip.sh NCCL_AUTOTUNE WORK_DIR
set -eu
tool=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
round_trip() {
name=$1
candidate=$2
shift 2
args="$*"
"$tool" $args >"$work/$name.txt"
"$tool" $args --format json >"$work/$name.json"
"$tool" import-nccl-tests "$work/$name.txt" --journal "$work/$name.jsonl" >"$work/$name.import.txt" 2>"$work/$name.import.err"
cat "$work/$name.import.txt"
python3 - "$work/$name.json" "$work/$name.jsonl" "$candidate" <<'PY'
import json, sys
bench = json.load(open(sys.argv[1]))
lines = [json.loads(l) for l in open(sys.argv[2])]
header, records = lines[0], [l for l in lines[1:] if l["type"] == "measurement"]
assert header["source"] == "simulated", header["source"]
halves = {}
for r in bench["results"]:
    halves.setdefault((r["collective"], r["bytes"]), {})[r["half"]] = r
candidate = json.loads(sys.argv[3])
assert len(records) == len(halves) > 0, f"{len(records)} records for {len(halves)} sizes"
for rec in records:
    key = (rec.get("collective", rec.get("operation")), rec["bytes"])
    h = halves[key]
    assert rec["source"] == "simulated", key
    assert rec["scale"] == {"nodes": 2, "ranks": 16}, (key, rec["scale"])
    assert rec["candidate"] == candidate, (key, rec["candidate"])
    for i, half in enumerate(("out_of_place", "in_place")):
        assert abs(rec["times_us"][i] - h[half]["time_us"]) <= 0.005 + 1e-9, (key, half, rec["times_us"], h[half]["time_us"])
        assert abs(rec["published_busbw_gbps"][i] - h[half]["busbw_gbps"]) <= 0.005 + 1e-9, (key, half)
    assert rec["used"]["algorithm"] == h["out_of_place"].get("algorithm"), key
    assert rec["used"]["protocol"] == h["out_of_place"].get("protocol"), key
    assert rec["outcome"] == "ok", key
print(f"OK: {len(records)} sizes read back from bench's table equal its JSON")
PY
}
round_trip collectives '{"algorithm": "ring", "protocol": "ll", "channels": 0}' \
  bench --simulate --example h100-8x --nodes 2 -c allreduce,allgather,reducescatter -b 1K -e 16M -f 4 --algo ring --proto ll --seed 3
round_trip p2p '{"algorithm": null, "protocol": null, "channels": 0}' \
  bench --simulate --example h100-8x --nodes 2 -c alltoall,sendrecv,gather,scatter -b 1K -e 16M -f 4 --seed 3
