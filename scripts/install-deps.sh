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
  catch2 libbenchmark-dev
)
# Tests that fuzz and render pictures need these too.
if [[ "${AUTOTUNE_DEPS:-all}" == all ]]; then
  packages+=(clang libclang-rt-14-dev chromium)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
