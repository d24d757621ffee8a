#!/bin/sh
# The profile the README shows is one the tool accepts: its first ```toml block, validated as the launcher
# and the plugin would read it. Usage: readme_profile_example.sh NCCL_AUTOTUNE README
set -eu
cli=$1
readme=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
awk '/^```toml/ { inside = 1; next } /^```/ { if (inside) exit } inside' "$readme" >"$dir/readme.toml"
if [ ! -s "$dir/readme.toml" ]; then
  echo "no \`\`\`toml block in $readme" >&2
  exit 1
fi
"$cli" profile validate "$dir/readme.toml"
