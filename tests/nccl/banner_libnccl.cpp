// A test fixture, not an NCCL: a shared library named libnccl.so.2 that carries only the banner every libnccl
// holds in its read-only data, so that finding a job's NCCL and reading its version without loading it can
// be tested against files of known versions. BANNER_VERSION comes from the build ("2.27.3").
extern "C" const char* autotune_banner_fixture() {
  static const char banner[] = "NCCL version " BANNER_VERSION "+cuda12.9";
  return banner;
}
