#include "common/host_name.hpp"

#include <unistd.h>

namespace autotune {

std::string host_name() {
  char host[256] = {0};
  if (::gethostname(host, sizeof host - 1) != 0) return "";
  return host;
}

}  // namespace autotune
