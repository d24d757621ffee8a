#!/usr/bin/env bash
# Installs everything nccl-autotune needs to build and test, from Debian's packages. Idempotent: packages
# already present are left alone. CUDA and NCCL are not Debian packages: the build uses them when found in
# $NCCL_HOME, $CUDA_HOME or /usr/local/cuda.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libhwloc-dev hwloc libibverbs-dev
  libopenmpi-dev openmpi-bin
  libboost-program-options-dev libtomlplusplus-dev libpugixml-dev nlohmann-json3-dev libfmt-dev
  libxxhash-dev
  catch2 libbenchmark-dev
  help2man
  # The Slurm tests (ctest -L slurm): a real cluster on this host (scripts/slurm-local.sh), srun's PMIx
  # (Slurm's mpi_pmix dlopens libpmix.so), and the tests' own scripts.
  slurmctld slurmd slurm-client munge libpmix-dev python3
  # The metrics tests (ctest -R metrics_cli): promtool checks the metrics, the alerting rules and the
  # dashboard's queries; node exporter is what serves the metrics file to Prometheus.
  prometheus prometheus-node-exporter
)
# Installing these must start no system daemon: the Slurm tests start and stop their own, and the metrics
# tests run promtool alone.
daemons=(munge slurmctld slurmd prometheus prometheus-node-exporter)
# Tests that fuzz and render pictures use these too; where they cannot be installed (Ubuntu ships chromium only
# as a snap) a failure here is a warning, not an error: the suite skips the render check without chromium;
# CI needs clang and its sanitizer runtime for the asan tree (preset asan: the ASan stage and the fuzzers;
# Debian has both).
optional=()
if [[ "${AUTOTUNE_DEPS:-all}" == all ]]; then
  optional=(clang libclang-rt-14-dev chromium lmod)
fi

missing() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}
mapfile -t need < <(missing "${packages[@]}")
mapfile -t want < <(missing "${optional[@]}")
if ((${#need[@]} + ${#want[@]} == 0)); then
  echo "install-deps: all $((${#packages[@]} + ${#optional[@]})) packages present"
  exit 0
fi
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
if ((${#need[@]})); then
  echo "install-deps: installing ${need[*]}"
  policy=""
  starts_daemon=0
  for p in "${daemons[@]}"; do [[ " ${need[*]} " == *" $p "* ]] && starts_daemon=1; done
  if ((starts_daemon)) && [[ ! -e /usr/sbin/policy-rc.d ]]; then
    # Debian's way to keep a package's service from starting on install (invoke-rc.d asks this file).
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
    $sudo chmod 0755 "$policy"
  fi
  status=0
  $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" || status=$?
  [[ -z "$policy" ]] || $sudo rm -f "$policy"
  ((status == 0)) || exit "$status"
fi
# One at a time, so that a package this distribution lacks (chromium on Ubuntu) does not keep the others out.
for p in "${want[@]}"; do
  echo "install-deps: installing $p (optional)"
  if ! $sudo apt-get install -y -qq --no-install-recommends "$p"; then
    case "$p" in
      chromium) echo "install-deps: warning: could not install chromium; the report's render check will skip" ;;
      lmod) echo "install-deps: warning: could not install lmod; the package check will not load the modulefile" ;;
      *) echo "install-deps: warning: could not install $p; the asan preset (scripts/sanitizers.sh asan, scripts/fuzz.sh) cannot build" ;;
    esac
  fi
done
