#!/usr/bin/env bash
# Builds the libFuzzer targets and runs every one for a fixed time: first on the saved regression
# inputs (fuzz/regressions/<target>/), then fuzzing from seed corpora generated out of the test fixtures
# (fuzz/make_seeds.sh). Exits nonzero on any crash, leak, timeout (-timeout=5 per input), out-of-memory
# (-rss_limit_mb=2048) or sanitizer report, and leaves the failing input in build-asan/fuzz-out/<target>/.
# The targets live in the asan tree (preset asan: clang, ASan+UBSan, libFuzzer's coverage), which the
# sanitizer stage also builds and tests: one configuration, built once.
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET (default 30)] [TARGET...] | scripts/fuzz.sh --build-only
# Environment: FUZZ_JOBS (build parallelism, default nproc), FUZZ_KEEP_CORPUS=1 keeps the grown corpora
# between runs.
set -uo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
jobs="${FUZZ_JOBS:-$(nproc)}"
build=build-asan
out="$build/fuzz-out"

cmake --preset asan >/dev/null || exit 1
cmake --build --preset asan -j "$jobs" --target fuzz_all >/dev/null || {
  echo "fuzz.sh: building the fuzz targets failed (rerun: cmake --build --preset asan --target fuzz_all)" >&2
  exit 1
}
if [[ "${1:-}" == --build-only ]]; then
  printf 'fuzz.sh: targets built in %d min %02d s\n' $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60))
  exit 0
fi
seconds="${1:-30}"
shift || true
targets=("$@")
if ((${#targets[@]} == 0)); then
  for exe in "$build"/fuzz/fuzz_*; do
    [[ -x "$exe" && -f "$exe" ]] && targets+=("$(basename "$exe")")
  done
fi

fuzz/make_seeds.sh "$out/seeds" >/dev/null
export LSAN_OPTIONS="suppressions=$PWD/fuzz/lsan.supp:print_suppressions=0"
export HWLOC_XML_VERBOSE=0
status=0
printf '%-22s %10s %8s %8s %8s  %s\n' target execs exec/s cov ft result
for t in "${targets[@]}"; do
  exe="$build/fuzz/$t"
  work="$out/$t"
  [[ "${FUZZ_KEEP_CORPUS:-0}" == 1 ]] || rm -rf "$work/corpus"
  mkdir -p "$work/corpus"
  log="$work/fuzz.log"
  common=(-timeout=5 -rss_limit_mb=2048 -artifact_prefix="$work/" -print_final_stats=1)
  # Known inputs first: each must now pass.
  regressions="fuzz/regressions/${t#fuzz_}"
  if [[ -d "$regressions" ]] && compgen -G "$regressions/*" >/dev/null; then
    if ! "$exe" "${common[@]}" "$regressions"/* >"$work/regressions.log" 2>&1; then
      printf '%-22s %10s %8s %8s %8s  %s\n' "$t" - - - - "FAIL (regression input; see $work/regressions.log)"
      status=1
      continue
    fi
  fi
  dict=()
  [[ -f "fuzz/dictionaries/${t#fuzz_}.dict" ]] && dict=(-dict="fuzz/dictionaries/${t#fuzz_}.dict")
  "$exe" "${common[@]}" "${dict[@]}" -max_total_time="$seconds" "$work/corpus" "$out/seeds/$t" >"$log" 2>&1
  rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  speed=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$')
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*')
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*')
  result=ok
  if ((rc != 0)); then
    result="FAIL (exit $rc; $(grep -m1 -o 'ERROR: [A-Za-z]*: [^ ]*.*\|SUMMARY: .*' "$log" | head -1); see $log)"
    status=1
  fi
  printf '%-22s %10s %8s %8s %8s  %s\n' "$t" "${execs:-?}" "${speed:-?}" "${cov:-?}" "${ft:-?}" "$result"
done
printf 'fuzz.sh: %d targets, %d s each, %s after %d min %02d s\n' ${#targets[@]} "$seconds" \
  "$( ((status == 0)) && echo passed || echo FAILED)" $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60))
exit $status
