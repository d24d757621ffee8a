# Shared by the realnccl test scripts (sourced): the environment a real-NCCL job runs in here, and the
# helpers that run it and read NCCL's own log. Every test runs NVIDIA's NCCL host code on the stand-in CUDA
# driver, runtime and NVML (tests/standin), with the recorded node NCCL_TOPO_FILE names.
#   realnccl_env BUILD_DIR [EXAMPLE]   exports the environment (default example: h100-8x)
#   profile_head FILE NCCL_VERSION     writes a profile's head; append [[rule]] tables after it
#   run_job LOG ARGS...                runs the job, its log in LOG; fails the test when the job fails
#   choices LOG                        NCCL's TUNING choices, one "Coll bytes algo proto channels" a line
set -eu
work=

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

realnccl_env() {
  src=$(cd "$(dirname "$0")/../.." && pwd)
  [ -e "$src/topology/examples/${2:-h100-8x}.xml" ] || fail "no bundled example ${2:-h100-8x} under $src"
  example=${2:-h100-8x}
  export LD_LIBRARY_PATH="$1/tests/standin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export NCCL_TOPO_FILE="$src/topology/examples/$example.xml" NCCL_STANDIN_EXAMPLE="$example"
  # No InfiniBand stand-in (NCCL's IB set-up crashes without one), no CUDA virtual memory or multicast in
  # the stand-in driver (so no NVLS), and NCCL's own log of every decision.
  export NCCL_IB_DISABLE=1 NCCL_CUMEM_ENABLE=0 NCCL_NVLS_ENABLE=0
  export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING,ENV
  unset NCCL_TUNER_PLUGIN NCCL_PROFILER_PLUGIN NCCL_AUTOTUNE_PROFILE NCCL_TUNER_CONFIG_FILE NCCL_ALGO NCCL_PROTO
  if [ -z "${work:-}" ]; then # once per test, however many examples it runs
    work=$(mktemp -d)
    [ -n "${REALNCCL_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
  fi
}

profile_head() {
  cat >"$1" <<TOML
schema = 1

[cluster]
name = "realnccl-test"
fingerprint = ""
gpu_model = ""
gpus_per_node = 8
nodes = 1
nics_per_node = 0

[provenance]
created = "2026-01-01T00:00:00Z"
tool_version = "0.1.0"
nccl_version = "$2"
source = "imported"
command = "hand-written realnccl test profile"

[env]

[policy]
uncalibrated = "nccl"
TOML
}

run_job() {
  log=$1
  shift
  "$job" "$@" >"$log" 2>&1 || {
    tail -n 30 "$log" >&2
    fail "the job failed: $job $*"
  }
  # NCCL goes on without a topology file it cannot read (it would then see no NVLink): not here.
  if grep -q "Could not open XML topology file" "$log"; then fail "NCCL could not read $NCCL_TOPO_FILE"; fi
}

# NCCL's TUNING lines as "coll bytes ALGO PROTO channels", one per collective the job issued: 2.29 logs
# "AllReduce: 4096 Bytes -> Algo RING proto LL128 channel{Lo..Hi}={0..3}" (channels "0..3"); 2.22 logs
# "4096 Bytes -> Algo 1 proto 1 time 12.3", numbers named here as NCCL's tables name them, no channels ("-").
# The collective and its bytes (as the tuner sees them: the whole buffer; NCCL's line gives AllGather's and
# ReduceScatter's per rank) are those the job announced last ("realnccl_job: op allreduce 4096"); NCCL logs the same
# decision once per rank: the first is kept, and ranks_agree says whether the others were the same.
choices() {
  awk '
    BEGIN { split("TREE RING COLLNET_DIRECT COLLNET_CHAIN NVLS NVLS_TREE PAT", an, " ")
            split("LL LL128 SIMPLE", pn, " ") }
    /^realnccl_job: op / { op = $3; size = $4; n++; next }
    / Bytes -> Algo / {
      for (i = 1; i <= NF; i++) if ($i == "Bytes") break
      a = $(i + 3); p = $(i + 5); ch = "-"
      if (match($0, /channel\{Lo\.\.Hi\}=\{[0-9.]+\}/)) ch = substr($0, RSTART + 17, RLENGTH - 18)
      if (a ~ /^[0-9]+$/) a = an[a + 1]
      if (p ~ /^[0-9]+$/) p = pn[p + 1]
      line = op " " size " " a " " p " " ch
      if (!(n in first)) { first[n] = line; order[++m] = n }
      else if (first[n] != line) bad[n] = bad[n] "; also " line
    }
    END { for (k = 1; k <= m; k++) print first[order[k]] (order[k] in bad ? " DISAGREE" bad[order[k]] : "") }
  ' "$1"
}
