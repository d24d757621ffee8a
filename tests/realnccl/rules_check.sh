#!/bin/sh
# Rules apply exactly as real NCCL logs them, and nowhere else:
#   rules     for the five collectives, at each rule's edges, inside, and just outside (8 bytes off), NCCL's
#             TUNING line equals the rule (channels too where NCCL logs them, 2.29); everywhere else it equals
#             NCCL's own choice (a run without the plugin); a rule naming NVLS, which NCCL marked unusable
#             here, is never chosen.
#   unchanged NCCL_TUNER_PLUGIN=none, and the plugin with a broken profile, leave every choice as a run
#             without the plugin made it, line by line.
#   rules_check.sh BUILD_DIR JOB PLUGIN VERSION rules|unchanged
. "$(dirname "$0")/lib.sh"
job=$2 plugin=$3 version=$4 mode=$5
realnccl_env "$1"

# collective min max algorithm protocol channels (bytes; channels 0 = NCCL decides)
rules="allreduce 4096 8192 ring ll128 0
allreduce 2097152 4194304 tree simple 4
allreduce 65536 131072 nvls simple 0
allgather 65536 262144 ring ll 2
reducescatter 1048576 2097152 ring ll128 0
broadcast 524288 1048576 ring ll 2
reduce 16384 65536 ring simple 1"

profile_head "$work/p.toml" "$version"
echo "$rules" | while read -r coll lo hi algo proto ch; do
  printf '\n[[rule]]\ncollective = "%s"\nmin_bytes = %s\nmax_bytes = %s\nalgorithm = "%s"\nprotocol = "%s"\nchannels = %s\n' \
    "$coll" "$lo" "$hi" "$algo" "$proto" "$ch" >>"$work/p.toml"
done
# Each rule's edges, inside, just outside; and a size of every collective that no rule covers.
ops=$(echo "$rules" | while read -r coll lo hi algo proto ch; do
  for b in $((lo - 8)) "$lo" $(((lo + hi) / 2 / 8 * 8)) "$hi" $((hi + 8)); do printf '%s:%s ' "$coll" "$b"; done
done)
ops="$ops allreduce:64 allgather:33554432 reducescatter:4096 broadcast:8 reduce:67108864"

export NCCL_TUNER_PLUGIN=none
run_job "$work/none.log" $ops
choices "$work/none.log" >"$work/none"
[ "$(wc -l <"$work/none")" -eq "$(echo $ops | wc -w)" ] || fail "NCCL logged $(wc -l <"$work/none") choices for $(echo $ops | wc -w) operations"
unset NCCL_TUNER_PLUGIN

if [ "$mode" = unchanged ]; then
  run_job "$work/unset.log" $ops
  choices "$work/unset.log" >"$work/unset"
  diff "$work/none" "$work/unset" || fail "NCCL_TUNER_PLUGIN=none and unset differ"
  printf 'schema = 1\n[cluster]\nname = \n' >"$work/broken.toml"
  export NCCL_TUNER_PLUGIN="$plugin" NCCL_AUTOTUNE_PROFILE="$work/broken.toml"
  run_job "$work/broken.log" $ops
  grep -q "TUNER/Autotune: profile .*broken.toml.* not used, NCCL decides" "$work/broken.log" ||
    fail "the plugin did not say it left the broken profile unused"
  choices "$work/broken.log" >"$work/broken"
  diff "$work/none" "$work/broken" || fail "a broken profile changed NCCL's choices"
  echo "NCCL $version: $(wc -l <"$work/none") choices the same without the plugin, with =none and with a broken profile"
  exit 0
fi

export NCCL_TUNER_PLUGIN="$plugin" NCCL_AUTOTUNE_PROFILE="$work/p.toml"
run_job "$work/rules.log" $ops
choices "$work/rules.log" >"$work/rules"
# What each line must be: the rule covering it (NVLS never: NCCL's own), else NCCL's own.
expect() {
  echo "$rules" | awk -v c="$1" -v b="$2" -v own="$3" -v logs_channels="$4" '
    $1 == c && b + 0 >= $2 + 0 && b + 0 <= $3 + 0 && $4 != "nvls" {
      split(own, o, " ")
      ch = !logs_channels ? "-" : $6 == 0 ? "*" : "0.." $6 - 1
      print c, b, toupper($4), toupper($5), ch; found = 1 }
    END { if (!found) print own }'
}
case $version in 2.22.*) logs_channels=0 ;; *) logs_channels=1 ;; esac
paste -d'|' "$work/none" "$work/rules" | while IFS='|' read -r own got; do
  set -- $own
  want=$(expect "$1" "$2" "$own" $logs_channels)
  case $want in
    *" *") [ "${got% *}" = "${want% *}" ] || fail "$1 $2: NCCL chose '$got', expected '$want'" ;;
    *) [ "$got" = "$want" ] || fail "$1 $2: NCCL chose '$got', expected '$want'" ;;
  esac
done
applied=$(diff "$work/none" "$work/rules" | grep -c '^>' || true)
echo "NCCL $version: $(wc -l <"$work/rules") choices as expected, $applied of them changed by the rules"
