#include "plugins/profile_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <optional>
#include <string_view>

#include "common/atomic_file.hpp"
#include "common/input_error.hpp"
#include "nccl/tuner_abi.h"
#include "profiles/compiled_rules.hpp"
#include "profiles/file_trust.hpp"
#include "profiles/nccl_csv.hpp"

#include "nccl/tuner_constants.hpp"
#include "profiles/profile_toml.hpp"

namespace autotune::plugin {
namespace {

// Where each table a profile may override (tuner_constants.hpp names them) lies in ncclTunerConstants_v5_t.
struct ConstantLayout {
  std::string_view name;
  size_t offset;
  std::array<int, 3> dims;  // trailing zeros: fewer dimensions
  bool bandwidth;           // GB/s; otherwise a latency in microseconds
};

constexpr std::array<ConstantLayout, 7> kConstantTables = {{
    {"base_latency", offsetof(ncclTunerConstants_v5_t, baseLatencies), {7, 3, 0}, false},
    {"hw_latency", offsetof(ncclTunerConstants_v5_t, hwLatencies), {3, 7, 3}, false},
    {"ll_max_bw", offsetof(ncclTunerConstants_v5_t, llMaxBws), {4, 3, 0}, true},
    {"per_ch_max_ring_ll128_bw", offsetof(ncclTunerConstants_v5_t, perChMaxRingLL128Bws), {4, 3, 0}, true},
    {"per_ch_max_tree_ll128_bw", offsetof(ncclTunerConstants_v5_t, perChMaxTreeLL128Bws), {4, 3, 0}, true},
    {"per_ch_max_tree_bw", offsetof(ncclTunerConstants_v5_t, perChMaxTreeBws), {4, 3, 0}, true},
    {"per_ch_max_nvls_tree_bw", offsetof(ncclTunerConstants_v5_t, perChMaxNVLSTreeBws), {4, 3, 0}, true},
}};

// A CSV line of NCCL's example plugin starts with a collective name and a comma; a TOML profile's first
// meaningful line is a [table] or a key = value.
bool looks_like_csv(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || line[first] == '#') continue;
    line = line.substr(first);
    if (line[0] == '[') return false;
    size_t comma = line.find(','), equals = line.find('=');
    return comma != std::string_view::npos && (equals == std::string_view::npos || comma < equals);
  }
  return false;
}

std::string errno_text(int err) {
  char buf[256];
  // GNU strerror_r returns the message (maybe not in buf).
  return strerror_r(err, buf, sizeof buf);
}

}  // namespace

profiles::Profile parse_any_profile(const std::string& text, const std::string& file_name,
                                    std::string* format) {
  const bool csv = looks_like_csv(text);
  if (format) *format = csv ? "CSV" : "TOML";
  if (!csv) return profiles::parse_profile(text, file_name);
  // Not validate_profile: overlapping rows are legal in NCCL's example plugin (the first match wins, which
  // the core reproduces), and a row NCCL cannot run is harmless (its cost-table entry is -1).
  profiles::Profile profile;
  profile.provenance.source = profiles::Source::imported;
  profile.provenance.command = "NCCL example tuner plugin CSV";
  profile.rules = profiles::parse_nccl_csv(text, file_name);
  return profile;
}

std::vector<ConstantPatch> resolve_constants(const std::vector<profiles::ConstantOverride>& overrides,
                                             const std::string& file_name) {
  std::vector<ConstantPatch> out;
  for (const auto& o : overrides) {
    const ConstantLayout* table = nullptr;
    for (const auto& t : kConstantTables)
      if (t.name == o.table) table = &t;
    if (!table)
      throw InputError(
          file_name, o.source_line,
          "expected a constants table (base_latency, hw_latency, ll_max_bw, per_ch_max_*_bw), found '" +
              o.table + "'");
    size_t rank = table->dims[2] ? 3 : 2;
    if (o.index.size() != rank)
      throw InputError(
          file_name, o.source_line,
          o.table + " takes " + std::to_string(rank) + " indices, found " + std::to_string(o.index.size()));
    size_t flat = 0;
    for (size_t i = 0; i < rank; ++i) {
      if (o.index[i] < 0 || o.index[i] >= table->dims[i])
        throw InputError(file_name, o.source_line,
                         o.table + " index " + std::to_string(i + 1) + " must be in 0.." +
                             std::to_string(table->dims[i] - 1) + ", found " + std::to_string(o.index[i]));
      flat = flat * table->dims[i] + o.index[i];
    }
    // The profile reader checks these too; the plugin checks again because it writes into NCCL's memory.
    const double max =
        nccl::constant_max(table->bandwidth ? nccl::ConstantUnit::gbps : nccl::ConstantUnit::microseconds);
    if (!std::isfinite(o.value) || o.value < 0.0 || o.value > max)
      throw InputError(file_name, o.source_line,
                       o.table + " must be between 0 and " + std::to_string(static_cast<long long>(max)) +
                           (table->bandwidth ? " GB/s" : " us") + ", found " + std::to_string(o.value));
    out.push_back({table->offset + flat * sizeof(double), o.value});
  }
  return out;
}

ProfileCache& ProfileCache::instance() {
  // Never destroyed: NCCL may finalize communicators from its own atexit handlers, after our statics.
  static ProfileCache* cache = new ProfileCache;
  return *cache;
}

LoadResult ProfileCache::load(const std::string& path) {
  // A profile that is not there is missing, not untrusted: say which, before the trust check would.
  struct stat there {};
  if (::stat(path.c_str(), &there) != 0 && (errno == ENOENT || errno == ENOTDIR))
    return {nullptr, "no such file (" + errno_text(errno) + ")"};
  if (!profiles::insecure_allowed()) {
    if (auto reason = profiles::untrusted_reason(path))
      return {nullptr, "not trusted: " + *reason + " (NCCL_AUTOTUNE_INSECURE=1 overrides)"};
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {nullptr, "cannot open: " + errno_text(errno)};
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return {nullptr, "cannot stat: " + errno_text(errno)};
  if (!S_ISREG(st.st_mode)) return {nullptr, "not a regular file"};
  // Identity from the descriptor we read, so the content parsed is the content keyed, even when the file is
  // replaced meanwhile.
  Identity id{static_cast<unsigned long long>(st.st_dev), static_cast<unsigned long long>(st.st_ino),
              static_cast<unsigned long long>(st.st_size), static_cast<long long>(st.st_mtim.tv_sec),
              static_cast<long long>(st.st_mtim.tv_nsec)};

  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = entries_.find(path); it != entries_.end() && it->second.identity == id)
    return it->second.result;

  LoadResult result;
  std::string text;
  text.reserve(static_cast<size_t>(st.st_size));
  if (const int err = read_all(fd, text)) result.problem = "cannot read: " + errno_text(err);
  if (result.problem.empty()) {
    try {
      auto loaded = std::make_shared<LoadedProfile>();
      loaded->path = path;
      std::optional<profiles::Profile> compiled;
      if (!looks_like_csv(text)) compiled = profiles::read_with_trusted_compiled_rules(path, text);
      if (compiled) {
        loaded->profile = std::move(*compiled);
        loaded->format = "TOML, compiled rules";
      } else {
        loaded->profile = parse_any_profile(text, path, &loaded->format);
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
  entries_[path] = Entry{id, result};
  return result;
}

}  // namespace autotune::plugin
