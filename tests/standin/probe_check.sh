#!/usr/bin/env bash
# The probe and check on the stand-in: the driver stand-in (libcuda.so.1) lists the recorded node's GPUs as
# the runtime stand-in does, so `probe` sees what the runner measures on, and `check` measures on the
# stand-in and says so ("standin", never "measured"). Usage: probe_check.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
use_standin --example h100-8x
"$exe" probe --format json >"$work/probe.json" || fail "probe exited with $?"
python3 - "$work/probe.json" <<'PY' || fail "the probe did not see the stand-in's GPUs"
import json, sys
gpus = json.load(open(sys.argv[1]))["gpus"]
assert len(gpus) == 8, f"{len(gpus)} GPUs"
assert all(g["name"] == "NVIDIA H100 80GB HBM3" and g["sm"] == 90 for g in gpus), gpus[0]
assert len({g["pci_bus_id"] for g in gpus}) == 8, "bus ids not distinct"
print("OK: the probe lists the recorded node's 8 GPUs (sm 90, distinct bus ids)")
PY
CUDA_VISIBLE_DEVICES=2,3 "$exe" probe --format json | python3 -c 'import json,sys; n=len(json.load(sys.stdin)["gpus"]); sys.exit(n != 2)' ||
  fail "CUDA_VISIBLE_DEVICES=2,3 did not leave 2 GPUs to the probe"
"$exe" check --bytes 1M --format json >"$work/check.json"
rc=$?
[ "$rc" -eq 0 ] || { cat "$work/check.json"; fail "check exited with $rc"; }
grep -q '"source": "standin"' "$work/check.json" || fail "check did not say it ran on the stand-in"
grep -q '"measured"' "$work/check.json" && grep -q '"source": "measured"' "$work/check.json" &&
  fail "check on the stand-in says measured"
echo "OK: check ran its passes on the stand-in and labels them standin"
