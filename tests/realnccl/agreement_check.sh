#!/bin/sh
# Real NCCL as the oracle for our model of NCCL's default choice (simulator/nccl_estimate.*): for every bundled
# example, the five collectives at every power of two from 8 B to 8 GiB, NCCL's own choice (no plugin, NVLS
# off as the stand-in driver offers no multicast) against the model's. Prints the table of every point that
# differs and a summary per example; fails when agreement falls below the floor recorded in
# agreement_floor.txt for this version and example (the floor only rises as the model is made to match).
#   agreement_check.sh BUILD_DIR JOB MODEL VERSION
. "$(dirname "$0")/lib.sh"
job=$2 model=$3 version=$4
floors="$(dirname "$0")/agreement_floor.txt"
realnccl_env "$1"
sizes= b=8
while [ "$b" -le 8589934592 ]; do sizes="$sizes $b"; b=$((b * 2)); done
status=0
for example in h100-8x h100-8x-2nic a100-pcie-8x; do
  realnccl_env "$1" "$example"
  ops=$(for c in broadcast reduce allgather reducescatter allreduce; do for s in $sizes; do printf '%s:%s ' $c $s; done; done)
  NCCL_TUNER_PLUGIN=none run_job "$work/$example.log" $ops
  choices "$work/$example.log" >"$work/$example.real"
  "$model" --nccl "$version" "$example" $sizes >"$work/$example.model" || fail "$model $example failed"
  # real: coll bytes ALGO PROTO Lo..Hi|-    model: coll bytes algo proto channels
  report=$(paste -d' ' "$work/$example.real" "$work/$example.model" | awk -v ex="$example" -v v="$version" '
    function norm(s) { s = tolower(s); gsub(/_/, "", s); return s }
    $1 != $6 || $2 != $7 { print "FAIL: the job and the model list different points: " $0; bad = 1; exit }
    { n++; real_ch = $5 == "-" ? "-" : substr($5, index($5, "..") + 2) + 1
      same = norm($3) == norm($8) && norm($4) == norm($9)
      if (same) ap++
      if (same && (real_ch == "-" || real_ch == $10)) ch++
      if (!same || (real_ch != "-" && real_ch != $10))
        printf "  %-13s %11s  NCCL %s/%s ch %s   model %s/%s ch %s\n", $1, $2, $3, $4, real_ch, $8, $9, $10 }
    END { if (!bad) printf "SUMMARY %s %s: %d points, algorithm+protocol %d (%d%%), with channels %d (%d%%)%s\n", v, ex, n, ap, 100 * ap / n, ch, 100 * ch / n, real_ch == "-" ? " (NCCL " v " logs no channels)" : "" }')
  echo "$report"
  summary=$(echo "$report" | grep "^SUMMARY") || fail "no summary for $example"
  got=$(echo "$summary" | sed 's/.*algorithm+protocol [0-9]* (\([0-9]*\)%), with channels [0-9]* (\([0-9]*\)%).*/\1 \2/')
  floor=$(awk -v v="$version" -v ex="$example" '$1 == v && $2 == ex { print $3, $4 }' "$floors")
  [ -n "$floor" ] || { echo "FAIL: no floor for $version $example in $floors"; status=1; continue; }
  set -- $got $floor
  if [ "$1" -lt "$3" ] || [ "$2" -lt "$4" ]; then
    echo "FAIL: $version $example: agreement $1%/$2% is below the floor $3%/$4%"
    status=1
  fi
done
exit $status
