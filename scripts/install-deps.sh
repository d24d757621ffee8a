#!/usr/bin/env bash
# Installs everything nccl-autotune needs to build and test, from Debian's packages. Idempotent: packages
# already present are left alone. CUDA and NCCL are not Debian packages: the build uses them when found in
# $NCCL_HOME, $CUDA_HOME or /usr/local/cuda.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libhwloc-dev hwloc libibverbs-dev
  libopenmpi-dev openmpi-bin
  libboost-program-options-dev libtomlplusplus-dev libpugixml-dev nlohmann-json3-dev libfmt-dev
  libxxhash-dev
  catch2 libbenchmark-dev
  help2man
)
# Tests that fuzz and render pictures use these too; where they cannot be installed (Ubuntu ships chromium only
# as a snap) a failure here is a warning, not an error: the suite skips the render check without chromium;
# CI needs clang for its fuzz stage (Debian has it).
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
  $sudo apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
# One at a time, so that a package this distribution lacks (chromium on Ubuntu) does not keep the others out.
for p in "${want[@]}"; do
  echo "install-deps: installing $p (optional)"
  if ! $sudo apt-get install -y -qq --no-install-recommends "$p"; then
    case "$p" in
      chromium) echo "install-deps: warning: could not install chromium; the report's render check will skip" ;;
      lmod) echo "install-deps: warning: could not install lmod; the package check will not load the modulefile" ;;
      *) echo "install-deps: warning: could not install $p; scripts/fuzz.sh cannot build the fuzzers" ;;
    esac
  fi
done
