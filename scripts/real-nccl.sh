#!/usr/bin/env bash
# Fetches NVIDIA's NCCL as Debian packages it (libnccl-dev: libnccl_static.a and nccl.h) for the realnccl tests:
#   scripts/real-nccl.sh [--dir DIR] [VERSION...]     (versions: 2.22.3 from trixie contrib, 2.29.7 from sid)
# Each version lands in DIR/VERSION/{include,lib} (default DIR: $REAL_NCCL_DIR, else build/real-nccl) and the
# script prints that directory. Idempotent and offline once extracted. The apt state it uses is private (its
# own lists, cache and sources under DIR/apt, naming only the contrib component of trixie or sid on the
# mirror this machine already uses): the system's apt sources and package state are never touched, so
# nothing from trixie or sid can be installed or upgrade bookworm's libc. One line and exit status 2 when an
# archive cannot be had (no network, the version gone from Debian, a bad argument).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

fail() {
  echo "scripts/real-nccl.sh: $1" >&2
  exit 2
}

# The Debian suite and package version of each NCCL release the tests run.
declare -A suite=([2.22.3]=trixie [2.29.7]=sid)
declare -A package=([2.22.3]=2.22.3-1-1 [2.29.7]=2.29.7-1-1)

dir=${REAL_NCCL_DIR:-$here/build/real-nccl}
versions=()
while [ $# -gt 0 ]; do
  case $1 in
    --dir)
      [ $# -ge 2 ] || fail "--dir: expected a directory after it"
      dir=$2
      shift 2
      ;;
    --help) fail "usage: scripts/real-nccl.sh [--dir DIR] [VERSION...] (versions: ${!suite[*]})" ;;
    -*) fail "expected --dir or a version, found '$1'" ;;
    *)
      [ -n "${suite[$1]:-}" ] || fail "version '$1': expected one of ${!suite[*]}"
      versions+=("$1")
      shift
      ;;
  esac
done
[ ${#versions[@]} -gt 0 ] || versions=(2.22.3 2.29.7)

# The Debian mirror the system's own sources name (deb822 URIs: or one-line deb entries), security excluded.
mirror() {
  if [ -n "${REAL_NCCL_MIRROR:-}" ]; then
    echo "$REAL_NCCL_MIRROR"
    return
  fi
  cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
    sed -n -e 's/^URIs:[[:space:]]*//p' -e 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]\+\).*/\2/p' |
    tr ' ' '\n' | grep -E '/debian/?$' | head -n 1
}

# apt-get with state, cache and sources of its own (nothing of the system's is read or written).
private_apt() {
  local root=$1
  shift
  apt-get -q -o Dir::State="$root/state" -o Dir::State::status="$root/state/status" \
    -o Dir::Cache="$root/cache" -o Dir::Etc::SourceList="$root/sources.list" \
    -o Dir::Etc::SourceParts="$root/sources.list.d" -o Dir::Etc::Preferences="$root/preferences" \
    -o Dir::Etc::PreferencesParts="$root/preferences.d" -o Debug::NoLocking=1 \
    -o APT::Sandbox::User="$(id -un)" -o Acquire::Languages=none "$@"
}

fetch() {
  local version=$1 out="$dir/$1"
  [ -s "$out/lib/libnccl_static.a" ] && [ -s "$out/include/nccl.h" ] && return 0
  local url
  url=$(mirror) || true
  [ -n "$url" ] || fail "NCCL $version: no Debian mirror in /etc/apt/sources.list* (set REAL_NCCL_MIRROR)"
  local root="$dir/apt/${suite[$version]}"
  mkdir -p "$root/state/lists/partial" "$root/cache/archives/partial" "$root/sources.list.d" "$root/preferences.d"
  : >"$root/state/status"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $url ${suite[$version]} contrib" \
    >"$root/sources.list"
  local log="$root/apt.log"
  private_apt "$root" update >"$log" 2>&1 ||
    fail "NCCL $version: apt-get update of ${suite[$version]} contrib on $url failed (see $log)"
  local deb="libnccl-dev_${package[$version]}_amd64.deb"
  if [ ! -s "$root/$deb" ]; then
    (cd "$root" && private_apt "$root" download "libnccl-dev=${package[$version]}") >>"$log" 2>&1 ||
      fail "NCCL $version: apt-get download libnccl-dev=${package[$version]} from ${suite[$version]} failed (see $log)"
  fi
  local tmp="$out.tmp.$$"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  dpkg-deb -x "$root/$deb" "$tmp/x" || fail "NCCL $version: dpkg-deb -x $root/$deb failed"
  local static header
  static=$(find "$tmp/x" -name libnccl_static.a | head -n 1)
  header=$(find "$tmp/x" -name nccl.h | head -n 1)
  [ -n "$static" ] && [ -n "$header" ] || fail "NCCL $version: $deb holds no libnccl_static.a or nccl.h"
  mkdir -p "$tmp/lib" "$tmp/include"
  mv "$static" "$tmp/lib/"
  mv "$header" "$tmp/include/"
  rm -rf "$tmp/x" "$root/$deb" "$out"
  mv "$tmp" "$out" # whole or not at all: an interrupted run leaves no half-extracted version behind
}

for v in "${versions[@]}"; do
  fetch "$v"
  echo "$dir/$v"
done
