#include "profiles/store.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "common/atomic_file.hpp"
#include "common/input_error.hpp"
#include "common/input_file.hpp"
#include "common/text.hpp"
#include "nccl/version.hpp"
#include "profiles/compiled_rules.hpp"
#include "profiles/profile_toml.hpp"

namespace autotune::profiles {
namespace {

// Profiles are kept per NCCL major.minor: "2.28.9" -> "2.28". (Validated profiles always parse.)
std::string major_minor(std::string_view version) {
  auto v = nccl::Version::parse(version);
  return v ? v->major_minor_text() : std::string(version);
}

bool is_profile_file(const std::filesystem::path& p) {
  std::string name = p.filename().string();
  // write_file_atomically's temporaries are ".<name>.tmp.XXXXXX"; .prev files end in ".prev", compiled
  // rules in ".rules" (both fail the extension test).
  return !name.empty() && name[0] != '.' && p.extension() == ".toml";
}

template <typename Pred>
std::vector<StoredProfile> find_where(const Store& store, Pred pred) {
  std::vector<StoredProfile> out;
  for (auto& s : store.list())
    if (s.profile && pred(*s.profile)) out.push_back(std::move(s));
  std::stable_sort(out.begin(), out.end(), [](const StoredProfile& a, const StoredProfile& b) {
    return nccl::Version::parse(a.profile->provenance.nccl_version) >
           nccl::Version::parse(b.profile->provenance.nccl_version);
  });
  return out;
}

}  // namespace

namespace {
bool file_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
}
}  // namespace

std::string sanitize_file_name(std::string_view name) {
  std::string out;
  for (char c : name) out += file_name_char(c) ? c : '_';
  if (out.empty() || out[0] == '.') out.insert(out.begin(), '_');
  return out;
}

void check_cluster_name(std::string_view name, std::string_view what) {
  constexpr size_t kMaxName = 100;
  const auto bad = std::find_if_not(name.begin(), name.end(), file_name_char);
  std::string found;
  if (name.empty())
    found = "an empty name";
  else if (name.size() > kMaxName)
    found = std::to_string(name.size()) + " characters";
  else if (name[0] == '.')
    found = "a leading '.'";
  else if (bad != name.end())
    found = "'" + printable(std::string_view(&*bad, 1)) + "'";
  if (!found.empty())
    throw InputError("", 0,
                     std::string(what) + " \"" + printable(name) +
                         "\": expected 1 to 100 letters, digits, '.', '_' or '-', not starting with '.' (the "
                         "name is the profile's file name in the store); found " +
                         found);
}

void check_store_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec))
    throw InputError(dir.string(), 0,
                     "expected a profile store (a directory, or none yet); found not a directory");
}

std::filesystem::path Store::default_dir() {
  if (const char* s = std::getenv("NCCL_AUTOTUNE_STORE"); s && *s) return s;
  if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x)
    return std::filesystem::path(x) / "nccl-autotune";
  if (const char* h = std::getenv("HOME"); h && *h)
    return std::filesystem::path(h) / ".local" / "share" / "nccl-autotune";
  throw InputError(
      "<env HOME>", 0,
      "expected NCCL_AUTOTUNE_STORE, XDG_DATA_HOME or HOME to locate the profile store; found none set");
}

std::vector<StoredProfile> Store::list() const {
  std::vector<StoredProfile> out;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir_, ec)) return out;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    if (!is_profile_file(entry.path())) continue;
    StoredProfile s{entry.path(), std::nullopt, ""};
    try {
      s.profile = read_profile_for_use(entry.path());  // the launcher lists the store on every run
    } catch (const std::exception& e) {
      s.error = e.what();
    }
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(),
            [](const StoredProfile& a, const StoredProfile& b) { return a.file < b.file; });
  return out;
}

std::vector<StoredProfile> Store::find_by_name(std::string_view cluster) const {
  return find_where(*this, [&](const Profile& p) { return p.cluster.name == cluster; });
}

std::vector<StoredProfile> Store::find_by_fingerprint(std::string_view fingerprint) const {
  return find_where(
      *this, [&](const Profile& p) { return !fingerprint.empty() && p.cluster.fingerprint == fingerprint; });
}

std::filesystem::path Store::path_for(const Profile& profile) const {
  check_cluster_name(profile.cluster.name);
  check_store_dir(dir_);
  return dir_ / (sanitize_file_name(profile.cluster.name) + "-nccl" +
                 sanitize_file_name(major_minor(profile.provenance.nccl_version)) + ".toml");
}

std::filesystem::path Store::journal_path_for(std::string_view cluster, std::string_view nccl_version) const {
  Profile naming;
  naming.cluster.name = cluster;
  naming.provenance.nccl_version = nccl_version;
  return journal_beside(path_for(naming));
}

std::filesystem::path Store::journal_beside(const std::filesystem::path& profile_file) {
  return profile_file.parent_path() / (profile_file.stem().string() + ".journal.jsonl");
}

std::filesystem::path Store::version_path(const std::filesystem::path& profile_file,
                                          std::string_view digest) {
  return profile_file.parent_path() / "versions" /
         (profile_file.stem().string() + "-" + std::string(digest) + ".toml");
}

namespace {

// The TOML and its compiled rules; the rules are a cache, written best effort (a stale one is refused by its
// digest anyway, and removing it keeps the directory honest).
void write_with_rules(const std::filesystem::path& target, const std::string& text) {
  write_file_atomically(target, text);
  try {
    write_compiled_rules(target, parse_profile(text, target.string()), text);
  } catch (const std::exception&) {
    std::error_code ec;
    std::filesystem::remove(compiled_rules_path(target), ec);
  }
}

}  // namespace

std::filesystem::path Store::save(const Profile& profile) const {
  std::filesystem::path target = path_for(profile);
  validate_profile(profile, target.string());
  std::filesystem::create_directories(dir_);
  std::error_code ec;
  if (std::filesystem::exists(target, ec)) {
    std::filesystem::path prev = target;
    prev += ".prev";
    write_file_atomically(prev, read_file(target, kProfileInput));
  }
  const std::string text = format_profile(profile);
  // The compiled rules follow the file's order, which is the canonical one format_profile wrote, not the
  // caller's; written after the TOML, so a reader never pairs new rules with old text.
  write_with_rules(target, text);
  const std::filesystem::path version = version_path(target, digest_text(profile_digest(text)));
  if (!std::filesystem::exists(version, ec)) {
    std::filesystem::create_directories(version.parent_path());
    write_with_rules(version, text);
  }
  return target;
}

}  // namespace autotune::profiles
