#!/bin/sh
# The systemd units in packaging/systemd/ as systemd reads them: `systemd-analyze verify` on each service and
# timer, their ExecStart pointed at this build's binary; any message (an unknown key, a bad value, a command
# that is not there) fails. Skips (77) without systemd-analyze.
# usage: systemd_units_check.sh SOURCE_DIR NCCL_AUTOTUNE
set -eu
src=$1
bin=$2
command -v systemd-analyze >/dev/null 2>&1 || { echo "SKIP: systemd-analyze not found (Debian: systemd)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for f in "$src"/packaging/systemd/*.service "$src"/packaging/systemd/*.timer; do
  sed "s|/usr/bin/nccl-autotune|$bin|" "$f" >"$work/$(basename "$f")"
done
cd "$work"
if ! systemd-analyze verify --man=no ./*.service ./*.timer >"$work/out" 2>&1 || [ -s "$work/out" ]; then
  cat "$work/out"
  echo "FAIL: systemd-analyze verify"
  exit 1
fi
echo "OK: $(ls | grep -c -e '\.service$' -e '\.timer$') units verified"
