// What the plugin gives back when NCCL unloads it (dlclose after its last communicator is finalized) or the
// process exits. The plugin carries its own static libstdc++, whose emergency exception-handling pool (about
// 70 KiB, allocated when the library loads) would otherwise stay allocated, unreachable, after every unload:
// a job that creates and destroys communicators in turn would lose it again on each reload.
// (The profile cache frees itself: profile_cache.cpp.)

namespace __gnu_cxx {
// libstdc++'s own, for memory checkers; weak, so a runtime without it links too.
__attribute__((weak)) void __freeres() noexcept;
}  // namespace __gnu_cxx

namespace autotune::plugin {
namespace {

__attribute__((destructor)) void release_runtime() {
  if (&__gnu_cxx::__freeres != nullptr) __gnu_cxx::__freeres();
}

}  // namespace
}  // namespace autotune::plugin
