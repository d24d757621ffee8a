#include <string>

#include "autotune/version.hpp"
#include "cli/commands.hpp"
#include "nccl/version.hpp"

namespace autotune::cli {
namespace {

// The runtime NCCL is looked up with dlopen, not linked: the CLI must also run on login nodes without NCCL.
std::string runtime_nccl() {
  std::string why;
  auto v = nccl::runtime_version("libnccl.so.2", &why);
  return v ? v->text() : "not found (" + why + ")";
}

}  // namespace

std::string version_text() {
  auto v = nccl::Version::from_code(kBuiltNcclVersion);
  std::string built = v ? "NCCL " + v->text() : "no NCCL";
  return std::string("nccl-autotune ") + kToolVersion + " (built with " + built +
         "; runtime libnccl.so.2: " + runtime_nccl() + ")";
}

}  // namespace autotune::cli
