#!/bin/sh
# GPU check: the live probe finds the node's GPUs with their bus id, SM version and NVLink state, and its JSON
# is valid. Exits 77 (skipped) where there is no CUDA device. Usage: gpu_probe_check.sh NCCL_AUTOTUNE_BINARY
set -eu
bin="$1"
if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "no CUDA device: nvidia-smi not found"; exit 77
fi
expected=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader 2>/dev/null | tr 'A-F' 'a-f' | sed 's/^0000\(....:\)/\1/' || true)
if [ -z "$expected" ]; then
  echo "no CUDA device: nvidia-smi lists no GPU"; exit 77
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$bin" probe --format json >"$out"
python3 - "$out" "$expected" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
expected = sorted(b.strip()[-12:] for b in sys.argv[2].split())
found = sorted(g["pci_bus_id"] for g in data["gpus"])
assert found == expected, f"GPUs by bus id: probe {found}, nvidia-smi {expected}"
cuda = [s for s in data["sources"] if s["name"] == "cuda"][0]
assert cuda["available"], f"cuda source not available: {cuda['detail']}"
nvml = [s for s in data["sources"] if s["name"] == "nvml"][0]
assert nvml["available"], f"nvml source not available: {nvml['detail']}"
for g in data["gpus"]:
    assert g["sm"] >= 60, f"GPU {g['index']} has no SM version: {g}"
    assert all(isinstance(l["up"], bool) for l in g["nvlinks"]), g
print(f"ok: {len(found)} GPU(s), sm {[g['sm'] for g in data['gpus']]}, "
      f"NVLinks up {[sum(l['count'] for l in g['nvlinks'] if l['up']) for g in data['gpus']]}")
PY
