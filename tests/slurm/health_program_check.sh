#!/usr/bin/env bash
# `check --slurm-health` against the local Slurm cluster, through the wrapper the package installs as
# HealthCheckProgram (packaging/slurm/nccl-autotune-healthcheck): a recorded node with a NIC at half rate
# (tests/topology/fixtures/health/nic_rate_degraded.json) drains exactly n2, with the reason naming the NIC;
# the healthy record resumes it; n3, drained by an administrator for another reason, is never resumed. Each
# run's time is printed (the health check's cost, without the local collective: these nodes have no GPU).
# Usage: health_program_check.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
fixtures=$source_root/tests/topology/fixtures/health
program=$source_root/packaging/slurm/nccl-autotune-healthcheck
# The wrapper runs the installed layout's bin/nccl-autotune; here it runs this build's.
mkdir -p "$work/prefix/libexec/nccl-autotune" "$work/prefix/bin"
cp "$program" "$work/prefix/libexec/nccl-autotune/"
ln -s "$exe" "$work/prefix/bin/nccl-autotune"
program=$work/prefix/libexec/nccl-autotune/nccl-autotune-healthcheck
trap 'scontrol update NodeName=n2,n3 State=RESUME >/dev/null 2>&1; rm -rf "$work"' EXIT

state() { scontrol show node "$1" | sed -n 's/^ *State=\([^ ]*\).*/\1/p'; }
reason() { scontrol show node "$1" | sed -n 's/^ *Reason=\(.*\) \[.*\]$/\1/p'; }
run_check() {  # NODE FIXTURE: runs the health check, prints its line and how long it took
  local start end
  start=$(date +%s%N)
  "$program" --node "$1" --input "$fixtures/$2" --store "$NCCL_AUTOTUNE_STORE" >"$work/out.txt" 2>&1
  rc=$?
  end=$(date +%s%N)
  cat "$work/out.txt"
  echo "  (health check on $1 with $2: exit $rc, $(((end - start) / 1000000)) ms)"
}

for n in n1 n2 n3 n4; do
  [[ $(state $n) != *DRAIN* ]] || fail "$n is drained before the test: $(reason $n)"
done
scontrol update NodeName=n3 State=DRAIN Reason="replacing DIMM 4" || fail "could not drain n3 as an administrator"

run_check n2 nic_rate_degraded.json
[ $rc = 1 ] || fail "a blocking finding: exit $rc, expected 1"
[[ $(state n2) == *DRAIN* ]] || fail "n2 not drained: state $(state n2)"
r=$(reason n2)
[[ $r == "nccl-autotune: mlx5_"* ]] || fail "n2's reason does not name the NIC: '$r'"
for n in n1 n4; do [[ $(state $n) != *DRAIN* ]] || fail "$n drained too: $(reason $n)"; done
grep -q '^result = "block"$' "$NCCL_AUTOTUNE_STORE/status/check-n2.toml" || fail "the store did not record n2's check"
grep -q '^drained = "true"$' "$NCCL_AUTOTUNE_STORE/status/check-n2.toml" || fail "the store did not record n2 drained"

run_check n2 nic_rate_degraded.json
[ "$(reason n2)" = "$r" ] || fail "a second run changed n2's reason: '$(reason n2)'"

run_check n3 nic_rate_degraded.json
[ "$(reason n3)" = "replacing DIMM 4" ] || fail "the check relabelled the administrator's drain of n3: '$(reason n3)'"
run_check n3 healthy.json
[ $rc = 0 ] || fail "a healthy node: exit $rc, expected 0"
[[ $(state n3) == *DRAIN* ]] || fail "n3, drained by an administrator, was resumed"

run_check n2 healthy.json
[ $rc = 0 ] || fail "a healthy node: exit $rc, expected 0"
[[ $(state n2) != *DRAIN* ]] || fail "n2 not resumed: state $(state n2), reason $(reason n2)"
grep -q '^drained = "false"$' "$NCCL_AUTOTUNE_STORE/status/check-n2.toml" || fail "the store still has n2 drained"

# Now as slurmd runs it: HealthCheckProgram in slurm.conf (slurmd gives it no arguments and an environment of
# SLURMD_NODENAME alone), every 5 s on every node; each node's record is named in a file the test switches.
conf_mark='# health_program_check.sh (removed when it ends)'
# (SLURM_CONF: this cluster's configuration is not where scontrol looks by default.)
printf '#!/bin/sh\nSLURM_CONF=%s exec "%s" --input "$(cat "%s/fixture-$SLURMD_NODENAME" 2>/dev/null || echo "%s/healthy.json")" --store "%s/slurmd-store"\n' \
  "$SLURM_CONF" "$program" "$work" "$fixtures" "$work" >"$work/healthcheck"
chmod 755 "$work/healthcheck" "$work"
restore_conf() {
  sed -i "/^$conf_mark\$/,\$d" "$SLURM_CONF"
  scontrol reconfigure >/dev/null 2>&1
}
trap 'restore_conf; scontrol update NodeName=n2,n3 State=RESUME >/dev/null 2>&1; rm -rf "$work"' EXIT
printf '%s\nHealthCheckProgram=%s\nHealthCheckInterval=5\n' "$conf_mark" "$work/healthcheck" >>"$SLURM_CONF"
echo "$fixtures/nic_rate_degraded.json" >"$work/fixture-n2"
scontrol update NodeName=n3 State=DRAIN Reason="replacing DIMM 4"
scontrol reconfigure || fail "scontrol reconfigure with HealthCheckProgram"
wait_for() {  # SECONDS DESCRIPTION COMMAND...: until COMMAND succeeds
  local limit=$1 what=$2
  shift 2
  for _ in $(seq $((limit * 4))); do "$@" && return 0; sleep 0.25; done
  fail "$what not within $limit s (n2: $(state n2) '$(reason n2)', n3: $(state n3) '$(reason n3)')"
}
n2_ours() { [[ $(state n2) == *DRAIN* && $(reason n2) == "nccl-autotune: mlx5_"* ]]; }
n2_back() { [[ $(state n2) != *DRAIN* ]]; }
wait_for 30 "slurmd's health check draining n2" n2_ours
for n in n1 n4; do [[ $(state $n) != *DRAIN* ]] || fail "slurmd's health check drained $n too: $(reason $n)"; done
echo "$fixtures/healthy.json" >"$work/fixture-n2"
wait_for 30 "slurmd's health check resuming n2" n2_back
sleep 6  # at least one more round on n3
[[ $(state n3) == *DRAIN* && $(reason n3) == "replacing DIMM 4" ]] || fail "n3's administrator drain did not stay: $(state n3) '$(reason n3)'"
grep -q '^result = "ok"$' "$work/slurmd-store/status/check-n2.toml" || fail "slurmd's runs left no record of n2"
restore_conf
echo "OK (as HealthCheckProgram): slurmd's health check drained n2 on the NIC at half rate and resumed it once healthy; n3 stays"
echo "OK: a NIC at half rate drains n2 alone with 'nccl-autotune: ...'; healthy again it resumes; the administrator's drain of n3 stays"
