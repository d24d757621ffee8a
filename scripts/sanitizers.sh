#!/usr/bin/env bash
# Builds and runs the tests under the sanitizers, each configuration built once, in its own tree:
#   asan: AddressSanitizer + UndefinedBehaviorSanitizer, clang at -O1 with asserts (preset asan, build-asan/,
#         where the fuzz targets live too): every test that can find a memory error in our code (plugin,
#         parsers, profiles, journal, store, launcher, runner, orchestrator, simulator, the stand-in jobs),
#         not those that only drive other programs (below). UBSan's `function` check is off (GCC, which this
#         stage used before, has none): it flags every call through a dlsym'd pointer whose type spells
#         CUresult as int, as the probe's seam does so as not to need CUDA's headers. Its `vptr` check is
#         off: it needs the C++ half of the runtime in the loading executable, which an NCCL-like loader
#         (tests/plugins' C program) lacks.
#         Left to the release suite:
#           - slurm: Slurm's daemons, srun and sbatch around the same orchestrator and launcher code the
#             mpirun and process-launcher tests run here (under ASan the label took over 5 min and once lost
#             a worker to Open MPI's TCP wire-up between the local slurmds);
#           - packaging: dpkg-deb, dpkg -i and the installed copy of the same binary;
#           - chromium: a headless browser rendering the report the report tests check here;
#           - realnccl: NVIDIA's NCCL archive, which is not ours to sanitize (the plugin it loads runs under
#             ASan in the plugin tests);
#           - standin: the jobs on the stand-in CUDA and NCCL (bench, tune, faults, run under mpirun), not
#             even built here (the preset sets AUTOTUNE_STANDIN_TESTS=OFF; realnccl needs the stand-in too).
#             Built with clang's ASan + UBSan + libFuzzer coverage their measurements take over 180 s each
#             (standin:bench_mpirun_np2, tune_orchestrated_mpirun, tune_one_process timed out); the
#             calibration and launcher code they drive runs here under mpirun and in process on the
#             simulator. To bring them back: the stand-in built without the coverage instrumentation, then
#             measured.
#   tsan: ThreadSanitizer (preset tsan, build-tsan/): the code with threads: the plugin, profiles and store,
#         and the plugin under many threads. Only those targets are built.
# Any sanitizer report fails its test (halt_on_error), and any failed test fails the script.
# Usage: scripts/sanitizers.sh [asan|tsan|all (default)] [build|test|both (default)];
# SANITIZER_JOBS sets the parallelism (default nproc).
set -uo pipefail
cd "$(dirname "$0")/.."
config="${1:-all}"
step="${2:-both}"
jobs="${SANITIZER_JOBS:-$(nproc)}"

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"

asan_skip_labels='gpu|slurm|packaging|chromium|realnccl|standin'
# Tests that launch ranks under mpirun (their names say "mpirun") run apart: Open MPI's components are
# dlopen'd and closed again, and its libraries keep no frame pointers, so LeakSanitizer can only name the
# owner of a leak with components kept loaded and the slow unwinder, which would double the rest's time.
mpi_tests='mpirun'

tsan_tests='^(test_plugins|test_profiles|test_reliability_threads|plugin_)'
tsan_targets=(nccl-tuner-autotune nccl_like_loader test_plugins test_profiles test_reliability_threads)

asan_build() {
  cmake --preset asan >/dev/null && cmake --build --preset asan -j "$jobs"
}
asan_test() {
  ctest --preset asan -j "$jobs" -LE "$asan_skip_labels" -E "$mpi_tests" --timeout 600 &&
    ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=0" \
      LSAN_OPTIONS="suppressions=$PWD/tests/lsan-mpi.supp:print_suppressions=0" \
      OMPI_MCA_mca_base_component_disable_dlclose=1 PMIX_MCA_mca_base_component_disable_dlclose=1 \
      ctest --preset asan -j "$jobs" -LE "$asan_skip_labels" -R "$mpi_tests" --timeout 600
}
tsan_build() {
  cmake --preset tsan >/dev/null && cmake --build --preset tsan -j "$jobs" --target "${tsan_targets[@]}"
}
tsan_test() {
  ctest --preset tsan -j "$jobs" -LE gpu -R "$tsan_tests" --timeout 600
}

status=0
run() {
  local name="$1" start=$SECONDS
  if "$name"; then
    printf 'sanitizers.sh: %s passed in %d min %02d s\n' "$name" $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60))
  else
    printf 'sanitizers.sh: %s FAILED after %d min %02d s\n' "$name" $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60))
    status=1
    return 1
  fi
}
configs=("$config")
[[ "$config" == all ]] && configs=(asan tsan)
for c in "${configs[@]}"; do
  case "$c:$step" in
    asan:build | asan:test | tsan:build | tsan:test) run "${c}_$step" ;;
    asan:both | tsan:both) run "${c}_build" && run "${c}_test" ;;
    *)
      echo "usage: scripts/sanitizers.sh [asan|tsan|all] [build|test|both]" >&2
      exit 2
      ;;
  esac
done
exit $status
