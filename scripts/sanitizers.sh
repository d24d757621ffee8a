#!/usr/bin/env bash
# Runs the test suite under the sanitizers, in two timed stages:
#   1. the asan preset (AddressSanitizer + UndefinedBehaviorSanitizer, Debug): the whole suite but the GPU tests;
#   2. the tsan preset (ThreadSanitizer): the plugin, profile/store and plugin-thread reliability tests, the
#      ones with threads. (The kill tests are processes killed mid-write, which TSan cannot see; they run in
#      the asan stage and the suite. Leaving them out spares building the tuner and topology under TSan.)
# Any sanitizer report fails its test (halt_on_error), and any failed test fails the script.
# Usage: scripts/sanitizers.sh [asan|tsan|all (default)]; SANITIZER_JOBS sets the parallelism (default nproc).
set -uo pipefail
cd "$(dirname "$0")/.."
stage="${1:-all}"
jobs="${SANITIZER_JOBS:-$(nproc)}"
status=0

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"

# The tests the tsan stage runs (ctest -R on the test executables' prefixes).
tsan_tests='^(test_plugins|test_profiles|test_reliability_threads|plugin_)'
tsan_targets=(nccl-tuner-autotune nccl_like_loader test_plugins test_profiles test_reliability_threads)

run_stage() {
  local name="$1"
  shift
  local start=$SECONDS
  if "$@"; then
    printf 'sanitizers.sh: %s passed in %d min %02d s\n' "$name" $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60))
  else
    printf 'sanitizers.sh: %s FAILED after %d min %02d s\n' "$name" $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60))
    status=1
  fi
}

# Tests that launch ranks under mpirun (their names say "mpirun") run apart: Open MPI's components are
# dlopen'd and closed again, and its libraries keep no frame pointers, so LeakSanitizer can only name the
# owner of a leak with components kept loaded and the slow unwinder, which would double the rest's time.
# The Slurm label runs in the release suite only: the code it drives (the launcher, the orchestrator's srun
# jobs, the journal on scancel) runs under ASan in the mpirun and process-launcher tests, while under ASan the
# label took over 5 minutes and once lost a worker to Open MPI's TCP wire-up between the local slurmds.
mpi_tests='mpirun'
asan_stage() {
  cmake --preset asan >/dev/null &&
    cmake --build --preset asan -j "$jobs" &&
    ctest --preset asan -j "$jobs" -LE "gpu|slurm" -E "$mpi_tests" --timeout 600 &&
    ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=0" \
      LSAN_OPTIONS="suppressions=$PWD/tests/lsan-mpi.supp:print_suppressions=0" \
      OMPI_MCA_mca_base_component_disable_dlclose=1 PMIX_MCA_mca_base_component_disable_dlclose=1 \
      ctest --preset asan -j "$jobs" -LE "gpu|slurm" -R "$mpi_tests" --timeout 600
}

tsan_stage() {
  cmake --preset tsan >/dev/null &&
    cmake --build --preset tsan -j "$jobs" --target "${tsan_targets[@]}" &&
    ctest --preset tsan -j "$jobs" -LE gpu -R "$tsan_tests" --timeout 600
}

case "$stage" in
  asan) run_stage "asan (whole suite)" asan_stage ;;
  tsan) run_stage "tsan (plugin, profiles and store, plugin threads)" tsan_stage ;;
  all)
    run_stage "asan (whole suite)" asan_stage
    run_stage "tsan (plugin, profiles and store, plugin threads)" tsan_stage
    ;;
  *)
    echo "usage: scripts/sanitizers.sh [asan|tsan|all]" >&2
    exit 2
    ;;
esac
exit $status
