// A tiny job for the launcher tests: prints its pid, its MPI rank when it has one, and every NCCL_*
// variable, one per line, sorted; then exits with argv[1] (default 0), or, given "sleep", waits for a signal.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

int main(int argc, char** argv) {
  std::vector<std::string> vars;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "NCCL_", 5) == 0) vars.emplace_back(*e);
  std::sort(vars.begin(), vars.end());
  std::printf("pid=%ld\n", static_cast<long>(::getpid()));
  if (const char* rank = std::getenv("OMPI_COMM_WORLD_RANK")) std::printf("rank=%s\n", rank);
  for (const auto& v : vars) std::printf("%s\n", v.c_str());
  std::fflush(stdout);
  if (argc > 1 && std::strcmp(argv[1], "sleep") == 0) {
    for (;;) ::pause();
  }
  return argc > 1 ? std::atoi(argv[1]) : 0;
}
