#include "launcher/exec.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

extern char** environ;

namespace autotune::launcher {

ExecFailure exec_command(const std::vector<std::string>& argv,
                         const std::vector<std::pair<std::string, std::string>>& set) {
  if (argv.empty()) return {127, "no command given"};
  // The new environment: every current entry not being replaced, then ours. Built as an envp instead of
  // setenv() so that nothing in this process changes if the exec fails.
  std::vector<std::string> entries;
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    bool replaced = false;
    for (const auto& [n, v] : set)
      replaced = replaced ||
                 (entry.size() > n.size() && entry.compare(0, n.size(), n) == 0 && entry[n.size()] == '=');
    if (!replaced) entries.emplace_back(entry);
  }
  for (const auto& [n, v] : set) entries.push_back(n + "=" + v);
  std::vector<char*> envp;
  for (auto& e : entries) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args_copy(argv);
  std::vector<char*> args;
  for (auto& a : args_copy) args.push_back(a.data());
  args.push_back(nullptr);

  std::fflush(stdout);
  std::fflush(stderr);
  ::execvpe(args[0], args.data(), envp.data());
  const int err = errno;
  ExecFailure failure;
  failure.exit_status = (err == ENOENT || err == ENOTDIR) ? 127 : 126;
  failure.message = "cannot run " + argv[0] + ": " + std::strerror(err);
  return failure;
}

}  // namespace autotune::launcher
