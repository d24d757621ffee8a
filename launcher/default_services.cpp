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

int built_nccl_major_minor() {
  auto built = nccl::Version::from_code(kBuiltNcclVersion);
  return built ? built->major_minor() : 0;
}

std::string fingerprint_cache_key(int nccl_major_minor) {
  return "nccl=" + std::to_string(nccl_major_minor) + " tool=" + kToolVersion;
}

FingerprintLookup node_fingerprint(int nccl_major_minor) {
  return FingerprintCache().get(fingerprint_cache_key(nccl_major_minor), [nccl_major_minor] {
    return topology::fingerprint(topology::probe_live(), nccl_major_minor);
  });
}

namespace {

// Of a cluster's profiles (one per NCCL version, newest first), the one made for the job's NCCL, else the
// newest (which the launcher then refuses, naming both versions, unless its policy allows it).
std::optional<fs::path> pick(const std::vector<profiles::StoredProfile>& found, int want) {
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
  s.find_by_name = [](const fs::path& store, const std::string& cluster,
                      int nccl_major_minor) -> std::optional<fs::path> {
    return pick(profiles::Store(store).find_by_name(cluster), nccl_major_minor);
  };
  s.find_by_fingerprint = [](const fs::path& store, const std::string& fingerprint) {
    // The fingerprint holds the NCCL major.minor, so these are all for the job's NCCL, newest first.
    std::vector<fs::path> out;
    for (const auto& f : profiles::Store(store).find_by_fingerprint(fingerprint)) out.push_back(f.file);
    return out;
  };
  s.node_fingerprint = [](int nccl_major_minor) { return node_fingerprint(nccl_major_minor); };
  s.node_fingerprint_facts = [](int nccl_major_minor) {
    return topology::fingerprint_facts(topology::probe_live(), nccl_major_minor);
  };
  s.job_nccl = [](const EnvLookup& env) { return find_job_nccl(env); };
  s.built_nccl_major_minor = built_nccl_major_minor();
  s.plugin = [] { return find_plugin(); };
  return s;
}

}  // namespace autotune::launcher
