#!/bin/sh
# `profile merge` end to end: two simulated calibrations of one cluster, one shape each, join into one profile
# whose rules the plugin gives each shape (through explain); a profile for another NCCL is refused with
# status 2 and nothing written. Usage: profile_merge_cli.sh NCCL_AUTOTUNE
set -eu
cli=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export NCCL_AUTOTUNE_INSECURE=1  # mktemp's directory may sit under a world-writable, non-sticky one in CI
fail() { echo "profile_merge_cli: $*" >&2; exit 1; }

# One collective up to 64 MiB gives each shape rules of its own; merging does not depend on how many.
for shape in 1x8 2x1; do
  "$cli" tune --simulate --example h100-8x --nodes 2 --shapes "$shape" --collectives allreduce --max-bytes 64M \
    --store "$dir/$shape" --name eos \
    >"$dir/tune-$shape.log" 2>&1 || fail "tune --shapes $shape failed: $(cat "$dir/tune-$shape.log")"
done
a=$dir/1x8/eos-nccl2.28.toml
b=$dir/2x1/eos-nccl2.28.toml
"$cli" profile merge "$a" "$b" -o "$dir/merged.toml" >"$dir/merge.out"
grep -q "into $dir/merged.toml" "$dir/merge.out" || fail "unexpected output: $(cat "$dir/merge.out")"
"$cli" profile validate "$dir/merged.toml" >/dev/null

# Each shape gets its own calibration's rules, and as many as that calibration made.
for shape in 1x8 2x1; do
  nodes=${shape%x*}
  ranks=$((nodes * ${shape#*x}))
  alone=$("$cli" explain --profile "$dir/$shape/eos-nccl2.28.toml" --nodes "$nodes" --ranks "$ranks" |
    grep -o '[0-9]* of [0-9]* rules apply' | cut -d' ' -f1)
  joined=$("$cli" explain --profile "$dir/merged.toml" --nodes "$nodes" --ranks "$ranks" |
    grep -o '[0-9]* of [0-9]* rules apply' | cut -d' ' -f1)
  [ -n "$alone" ] && [ "$alone" -gt 0 ] || fail "the $shape calibration made no rule"
  [ "$alone" = "$joined" ] || fail "$shape: $alone rules alone, $joined in the merged profile"
done

sed 's/^nccl_version = .*/nccl_version = "2.27.3"/' "$b" >"$dir/other.toml"
status=0
"$cli" profile merge "$a" "$dir/other.toml" -o "$dir/refused.toml" 2>"$dir/err" || status=$?
[ "$status" = 2 ] || fail "expected status 2 for another NCCL, got $status"
grep -q "another NCCL major.minor (2.28.9 and 2.27.3)" "$dir/err" || fail "unexpected error: $(cat "$dir/err")"
[ ! -e "$dir/refused.toml" ] || fail "a refused merge wrote its output"
echo "profile_merge_cli: ok"
