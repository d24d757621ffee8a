#include "plugins/profile_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <optional>
#include <string_view>
#include <variant>

#include "common/input_error.hpp"
#include "common/input_file.hpp"
#include "nccl/tuner_constants.hpp"
#include "profiles/any_profile.hpp"
#include "profiles/compiled_rules.hpp"
#include "profiles/file_trust.hpp"

namespace autotune::plugin {
namespace {

std::string errno_text(int err) {
  char buf[256];
  // GNU strerror_r returns the message (maybe not in buf).
  return strerror_r(err, buf, sizeof buf);
}

}  // namespace

std::vector<ConstantPatch> resolve_constants(const std::vector<profiles::ConstantOverride>& overrides,
                                             const std::string& file_name) {
  std::vector<ConstantPatch> out;
  for (const auto& o : overrides) {
    const nccl::ConstantTable* table = nccl::find_constant_table(o.table);
    if (!table)
      throw InputError(
          file_name, o.source_line,
          "expected a constants table (base_latency, hw_latency, ll_max_bw, per_ch_max_*_bw), found '" +
              o.table + "'");
    // The v7 struct holds every entry a profile can name; the v5 struct all but the Rubin row.
    const auto v7 = nccl::constant_offset(o.table, o.index, nccl::kCompcapRowsV7);
    if (!v7)
      throw InputError(file_name, o.source_line,
                       o.table + ": expected " + std::to_string(table->indices.size()) +
                           " indices in range; found " + nccl::constant_entry_name(o.table, o.index));
    // The profile reader checks these too; the plugin checks again because it writes into NCCL's memory.
    const double max = nccl::constant_max(table->unit);
    if (!std::isfinite(o.value) || o.value < 0.0 || o.value > max)
      throw InputError(file_name, o.source_line,
                       o.table + " must be between 0 and " + std::to_string(static_cast<long long>(max)) +
                           (table->unit == nccl::ConstantUnit::gbps ? " GB/s" : " us") + ", found " +
                           std::to_string(o.value));
    out.push_back({nccl::constant_entry_name(o.table, o.index),
                   nccl::constant_offset(o.table, o.index, nccl::kCompcapRowsV5), *v7, o.value});
  }
  return out;
}

namespace {
// Constant-initialised, so it is valid before and after every static object's lifetime.
std::atomic<bool> g_cache_alive{true};
}  // namespace

ProfileCache* ProfileCache::instance() {
  // Communicators hold their profile by shared_ptr, so destroying the cache under a live one (finalized later
  // from NCCL's exit handlers) only drops the cache's references.
  static ProfileCache cache;
  return g_cache_alive.load(std::memory_order_acquire) ? &cache : nullptr;
}

ProfileCache::~ProfileCache() {
  g_cache_alive.store(false, std::memory_order_release);
}

namespace {

LoadResult unusable(std::string why) {
  LoadResult r;
  r.problem = std::move(why);
  r.first_load = true;
  return r;
}

// A device's times change whenever anyone writes to it (/dev/null): only its inode identifies it.
ProfileCache::Identity identity_of(const struct stat& st) {
  if (!S_ISREG(st.st_mode))
    return {static_cast<unsigned long long>(st.st_dev), static_cast<unsigned long long>(st.st_ino), 0, 0, 0};
  return {static_cast<unsigned long long>(st.st_dev), static_cast<unsigned long long>(st.st_ino),
          static_cast<unsigned long long>(st.st_size), static_cast<long long>(st.st_mtim.tv_sec),
          static_cast<long long>(st.st_mtim.tv_nsec)};
}

bool names(const std::string& path, const struct stat& opened) {
  struct stat now {};
  return ::stat(path.c_str(), &now) == 0 && now.st_dev == opened.st_dev && now.st_ino == opened.st_ino;
}

// Opened (never blocking, a regular file within the size cap), then judged: the trust check is about the file
// this descriptor reads, not another the path may name by then. A store publishing a profile replaces it by
// rename; one landing during the check would otherwise have the job refuse the profile for its whole life,
// so a refusal while the path names another file is tried again. A path that keeps changing is refused.
std::variant<OpenedInput, std::string> open_trusted(const std::string& path) {
  constexpr int kTries = 8;
  for (int i = 1;; ++i) {
    auto opened = open_input(path, profiles::kProfileInput);
    auto* in = std::get_if<OpenedInput>(&opened);
    if (!in || profiles::insecure_allowed()) return opened;
    auto reason = profiles::untrusted_reason(path, &in->st);
    if (!reason) return opened;
    if (i == kTries || names(path, in->st))
      return "not trusted: " + *reason + " (NCCL_AUTOTUNE_INSECURE=1 overrides)";
  }
}

}  // namespace

LoadResult ProfileCache::load(const std::string& path) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = entries_.find(path); it != entries_.end()) {
    if (!it->second.result.first_load) return kept(it->second, path);
    LoadResult first = it->second.result;  // read by peek(): this is the first load that says so
    it->second.result.first_load = false;
    return first;
  }
  Entry& entry = entries_[path];
  entry.result = read(path, &entry.identity);
  LoadResult first = entry.result;
  entry.result.first_load = false;  // later communicators get it from here
  return first;
}

std::shared_ptr<const LoadedProfile> ProfileCache::peek(const std::string& path) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = entries_.find(path); it != entries_.end()) return it->second.result.profile;
  Entry& entry = entries_[path];
  entry.result = read(path, &entry.identity);
  return entry.result.profile;
}

// What the job read first, and once, that the file has changed since.
LoadResult ProfileCache::kept(Entry& entry, const std::string& path) {
  LoadResult out = entry.result;
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  // A file that was missing has changed when it exists; one that was there, when it is gone or another.
  const bool was_there = entry.identity.inode != 0;
  const bool changed = exists ? !was_there || !(identity_of(st) == entry.identity) : was_there;
  if (!entry.change_said && changed) {
    entry.change_said = true;
    out.changed = "profile " + path + " changed on disk since this process read it" +
                  (out.profile ? " (digest " + profiles::digest_text(out.profile->digest) + ")" : "") +
                  ": this job keeps what it read; the change is for the next job";
  }
  return out;
}

LoadResult ProfileCache::read(const std::string& path, Identity* identity) {
  // A profile that is not there is missing, not untrusted: say which, before the trust check would.
  struct stat there {};
  if (::stat(path.c_str(), &there) != 0 && (errno == ENOENT || errno == ENOTDIR))
    return unusable("no such file (" + errno_text(errno) + ")");
  *identity = identity_of(there);  // also for a file refused below: its refusal is said once, not as a change
  auto opened = open_trusted(path);
  if (auto* why = std::get_if<std::string>(&opened)) return unusable(*why);
  const OpenedInput& in = std::get<OpenedInput>(opened);
  const int fd = in.fd.get();
  const struct stat& st = in.st;
  // Identity from the descriptor we read, so the content parsed is the content keyed, even when the file is
  // replaced meanwhile.
  *identity = identity_of(st);

  LoadResult result;
  result.first_load = true;
  auto loaded = std::make_shared<LoadedProfile>();
  loaded->path = path;
  // The compiled rules first, without holding the TOML text; the text itself only when they do not belong.
  std::optional<profiles::Profile> compiled;
  try {
    compiled = profiles::read_with_trusted_compiled_rules(path, fd, static_cast<uint64_t>(st.st_size),
                                                          &loaded->digest);
  } catch (const std::exception&) {
  }
  // The compiled records carry no evidence, and exploration needs each rule's runner-up: read the TOML.
  if (compiled && compiled->online && compiled->online->explore > 0.0) compiled.reset();
  std::string text;
  if (!compiled) result.problem = read_input(in, profiles::kProfileInput, text);
  if (result.problem.empty()) {
    try {
      if (compiled) {
        loaded->profile = std::move(*compiled);
        loaded->format = "TOML, compiled rules";
      } else {
        loaded->digest = profiles::profile_digest(text);
        profiles::ProfileRead read = profiles::read_any_profile(path, text, /*use_compiled=*/false);
        loaded->profile = std::move(read.profile);
        loaded->format = std::move(read.format);
        loaded->skipped = std::move(read.skipped);
      }
      if (loaded->profile.schema > profiles::kSchemaVersion)
        throw InputError(path, 0,
                         "schema " + std::to_string(loaded->profile.schema) +
                             " is newer than this plugin's " + std::to_string(profiles::kSchemaVersion));
      try {
        loaded->constants = resolve_constants(loaded->profile.constants, path);
      } catch (const InputError& e) {
        loaded->constants_problem = e.what();
      }
      result.profile = std::move(loaded);
    } catch (const InputError& e) {
      result.problem = e.what();
    } catch (const std::exception& e) {
      result.problem = std::string("cannot parse: ") + e.what();
    }
  }
  return result;
}

}  // namespace autotune::plugin
