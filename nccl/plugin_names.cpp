#include "nccl/plugin_names.hpp"

namespace autotune::nccl {
namespace {

bool is_bare_name(const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos) return false;
  const bool library_file = name.rfind("lib", 0) == 0 && name.size() >= 3 && name.ends_with(".so");
  return !library_file;
}

}  // namespace

std::vector<std::string> plugin_library_names(const std::string& prefix,
                                              const std::optional<std::string>& value) {
  if (!value || value->empty()) return {prefix + ".so"};
  std::vector<std::string> names{*value};
  if (is_bare_name(*value)) names.push_back(prefix + "-" + *value + ".so");
  return names;
}

}  // namespace autotune::nccl
