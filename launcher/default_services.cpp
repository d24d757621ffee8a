#include "launcher/default_services.hpp"

#include "autotune/version.hpp"
#include "common/install_paths.hpp"
#include "nccl/version.hpp"
#include "profiles/compiled_rules.hpp"
#include "profiles/profile_toml.hpp"
#include "profiles/store.hpp"
#include "topology/fingerprint.hpp"
#include "topology/reader.hpp"

namespace autotune::launcher {
namespace fs = std::filesystem;

int fingerprint_nccl_major_minor() {
  auto built = nccl::Version::from_code(kBuiltNcclVersion);
  return built ? built->major_minor() : 0;
}

std::string fingerprint_cache_key() {
  return "nccl=" + std::to_string(fingerprint_nccl_major_minor()) + " tool=" + kToolVersion;
}

FingerprintLookup node_fingerprint() {
  return FingerprintCache().get(fingerprint_cache_key(), [] {
    return topology::fingerprint(topology::probe_live(), fingerprint_nccl_major_minor());
  });
}

namespace {

// Of a cluster's profiles (one per NCCL version, newest first), the one made for the NCCL this tool was
// built with, else the newest.
std::optional<fs::path> pick(const std::vector<profiles::StoredProfile>& found) {
  const int want = fingerprint_nccl_major_minor();
  for (const auto& f : found) {
    if (!f.profile) continue;
    auto v = nccl::Version::parse(f.profile->provenance.nccl_version);
    if (v && v->major_minor() == want) return f.file;
  }
  if (found.empty()) return std::nullopt;
  return found.front().file;
}

}  // namespace

Services default_services() {
  Services s;
  s.read_profile = [](const fs::path& p) { return profiles::read_profile_for_use(p); };
  s.store_dir = [](const std::optional<fs::path>& option) {
    return option ? *option : profiles::Store::default_dir();
  };
  s.find_by_name = [](const fs::path& store, const std::string& cluster) -> std::optional<fs::path> {
    return pick(profiles::Store(store).find_by_name(cluster));
  };
  s.find_by_fingerprint = [](const fs::path& store, const std::string& fingerprint) {
    std::vector<profiles::StoredProfile> found = profiles::Store(store).find_by_fingerprint(fingerprint);
    std::vector<fs::path> out;
    if (auto best = pick(found)) out.push_back(*best);
    for (const auto& f : found)
      if (out.empty() || f.file != out.front()) out.push_back(f.file);
    return out;
  };
  s.node_fingerprint = [] { return node_fingerprint(); };
  s.plugin = [] { return find_plugin(); };
  return s;
}

}  // namespace autotune::launcher
