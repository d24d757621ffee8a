#!/usr/bin/env bash
# `nccl-autotune profile compile`: writes FILE.toml.rules for a good profile; a bad one gets exit 2, one
# file:line message and no .rules file. Arguments: the nccl-autotune binary, a valid profile.
set -uo pipefail
bin=$1 profile=$2
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cp "$profile" "$dir/p.toml"
out=$("$bin" profile compile "$dir/p.toml" 2>&1) || fail "good profile: exit $?: $out"
[[ -f $dir/p.toml.rules ]] || fail "no $dir/p.toml.rules"
[[ $(head -c 8 "$dir/p.toml.rules") == ATRULES1 ]] || fail "no ATRULES1 magic"
rules=$(grep -c '^\[\[rule\]\]' "$dir/p.toml")
(( $(stat -c %s "$dir/p.toml.rules") == 56 + 80 * rules )) || fail "size is not 56 + 80 x $rules"
[[ $out == "compiled $rules rules into $dir/p.toml.rules" ]] || fail "output: $out"

printf 'schema = 1\n[cluster]\nname = 3\n' >"$dir/bad.toml"
"$bin" profile compile "$dir/bad.toml" 2>"$dir/err"
rc=$?
((rc == 2)) || fail "bad profile: exit $rc, expected 2"
grep -q "bad.toml:3: cluster.name" "$dir/err" || fail "bad profile: message $(cat "$dir/err")"
(( $(wc -l <"$dir/err") == 1 )) || fail "more than one stderr line"
[[ ! -e $dir/bad.toml.rules ]] || fail "bad profile got a .rules file"

# A valid profile whose settings follow its rules cannot be split into head and rules.
{ cat "$profile"; printf '\n[constants]\nbase_latency.ring.simple = 8.4\n'; } >"$dir/late.toml"
"$bin" profile validate "$dir/late.toml" >/dev/null || fail "late.toml should be a valid profile"
"$bin" profile compile "$dir/late.toml" 2>"$dir/err"
rc=$?
((rc == 2)) || fail "settings after rules: exit $rc, expected 2"
grep -q "before the first \[\[rule\]\]" "$dir/err" || fail "settings after rules: $(cat "$dir/err")"
echo "profile compile: ok ($rules rules)"
