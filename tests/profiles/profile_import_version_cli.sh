#!/usr/bin/env bash
# `nccl-autotune profile import X.toml --nccl-version V`: the imported profile is filed for V and says V; a
# version that is not one is refused with exit 2. Arguments: the nccl-autotune binary, a valid profile.
set -uo pipefail
bin=$1 profile=$2
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

out=$("$bin" profile import "$profile" --name imported --nccl-version 2.30.1 --store "$dir/store" 2>&1) ||
  fail "import: exit $?: $out"
file=$(ls "$dir"/store/imported-nccl2.30.toml 2>/dev/null) || fail "not filed under 2.30: $(ls "$dir/store")"
grep -q '^nccl_version = "2.30.1"$' "$file" || fail "the profile does not say 2.30.1: $(grep nccl_version "$file")"

"$bin" profile import "$profile" --nccl-version 2.x --store "$dir/store" 2>"$dir/err"
rc=$?
((rc == 2)) || fail "bad version: exit $rc, expected 2"
grep -q 'provenance.nccl_version: expected a version such as 2.28.9; found "2.x"' "$dir/err" ||
  fail "bad version: message $(cat "$dir/err")"
echo "ok"
