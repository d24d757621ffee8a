#include "calibrate/telemetry_trust.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>
#include <utility>
#include <variant>

#include "common/input_error.hpp"
#include "common/text.hpp"
#include "common/unique_fd.hpp"
#include "nccl/version.hpp"
#include "profiles/compiled_rules.hpp"
#include "profiles/store.hpp"
#include "runners/bandwidth.hpp"

namespace autotune::calibrate {
namespace {

std::string user_name(uid_t uid) {
  struct passwd pw {};
  struct passwd* found = nullptr;
  char buffer[4096];
  if (::getpwuid_r(uid, &pw, buffer, sizeof buffer, &found) == 0 && found) return found->pw_name;
  return "uid " + std::to_string(uid);
}

// The names in the directory open at `dir_fd`, sorted.
std::vector<std::string> names_in(int dir_fd) {
  std::vector<std::string> names;
  const int listing = ::dup(dir_fd);
  if (listing < 0) return names;
  DIR* d = ::fdopendir(listing);
  if (!d) {
    ::close(listing);
    return names;
  }
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n.empty() || n[0] == '.' || n.size() <= 10 || !n.ends_with(".telemetry")) continue;
    names.push_back(n);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

struct Opened {
  std::string text;
  struct stat st {};
};

// The file `name` in `dir_fd` as the trust model allows it, or why not. (The same rules as the project's
// other file inputs: no link followed, regular only, non-blocking, size-capped, checked on the descriptor.)
std::variant<Opened, std::string> open_telemetry(int dir_fd, const std::string& name) {
  UniqueFd fd(::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0)
    return errno == ELOOP ? std::string("expected a regular file; found a symbolic link (not followed)")
                          : std::string("cannot open: ") + std::strerror(errno);
  Opened o;
  if (::fstat(fd.get(), &o.st) != 0) return std::string("cannot stat: ") + std::strerror(errno);
  if (!S_ISREG(o.st.st_mode))
    return std::string("expected a regular file; found a FIFO, device or directory");
  if (o.st.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(o.st.st_mode & 07777));
    return std::string("expected a file only its owner can write; found mode ") + mode +
           " (anyone could have written it)";
  }
  if (o.st.st_size > static_cast<off_t>(profiles::kMaxTelemetryBytes))
    return "expected at most " + std::to_string(profiles::kMaxTelemetryBytes) + " bytes; found " +
           std::to_string(o.st.st_size);
  char buffer[16384];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::string("cannot read: ") + std::strerror(errno);
    if (n == 0) break;
    o.text.append(buffer, static_cast<size_t>(n));
    if (o.text.size() > profiles::kMaxTelemetryBytes)
      return "expected at most " + std::to_string(profiles::kMaxTelemetryBytes) + " bytes; found it growing";
  }
  return o;
}

// Why a whole, parsed file of this cluster is not believed; nullopt when it is.
std::optional<std::string> distrust(const profiles::Telemetry& t, const TelemetryTrust& trust) {
  if (!trust.known_digest || !trust.known_digest(t.digest))
    return "expected telemetry of a profile version this store published for " + trust.cluster +
           "; found digest " + t.digest;
  const auto mine = nccl::Version::parse(trust.nccl_version), theirs = nccl::Version::parse(t.nccl_version);
  if (!mine || !theirs || !mine->same_major_minor(*theirs))
    return "expected telemetry of NCCL " + (mine ? mine->major_minor_text() : trust.nccl_version) +
           " (the profile's); found NCCL " + t.nccl_version;
  if (trust.profile)
    for (const auto& row : t.rows)
      if (auto why = implausible(row, *trust.profile))
        return "line " + std::to_string(row.line) + ": " + *why;
  return std::nullopt;
}

}  // namespace

std::optional<std::string> implausible(const profiles::TelemetryRow& r, const profiles::Profile& profile) {
  const auto bytes = static_cast<uint64_t>(r.mean_bytes);
  const double fastest = runners::busbw_gbps(r.collective, r.ranks, bytes, r.min_us);
  if (fastest > kMaxPlausibleBusbwGbps)
    return "implausible: " + three_digits(r.min_us) + " us for " + three_digits(r.mean_bytes) + " B is " +
           three_digits(fastest) + " GB/s of bus bandwidth, beyond any fabric (" +
           three_digits(kMaxPlausibleBusbwGbps) + " GB/s)";
  const profiles::CommShape shape{r.nodes, r.ranks, r.ranks_per_node, r.ranks_per_node};
  double best = 0.0;
  for (const auto& rule : profile.rules) {
    if (rule.collective != r.collective || !rule.applies_to(shape)) continue;
    best = std::max({best, rule.busbw_gbps.value_or(0.0), rule.default_busbw_gbps.value_or(0.0),
                     rule.runner_up ? rule.runner_up->busbw_gbps : 0.0});
  }
  const double median = runners::busbw_gbps(r.collective, r.ranks, bytes, r.p50_us);
  if (best > 0.0 && median > best * kMaxOverCalibrated)
    return "implausible: a median of " + three_digits(median) + " GB/s bus bandwidth, over " +
           three_digits(kMaxOverCalibrated) + " times the best the calibration measured for this shape (" +
           three_digits(best) + " GB/s)";
  return std::nullopt;
}

TelemetryTrust store_trust(const profiles::Profile& profile, const std::filesystem::path& profile_file,
                           const std::filesystem::path& store_file) {
  std::vector<std::string> digests = {profiles::file_digest_text(profile_file)};
  std::error_code ec;
  if (std::filesystem::exists(store_file, ec)) digests.push_back(profiles::file_digest_text(store_file));
  TelemetryTrust trust;
  trust.cluster = profile.cluster.name;
  trust.nccl_version = profile.provenance.nccl_version;
  trust.profile = &profile;
  trust.known_digest = [digests, store_file](std::string_view d) {
    std::error_code e;
    return std::find(digests.begin(), digests.end(), d) != digests.end() ||
           std::filesystem::exists(profiles::Store::version_path(store_file, d), e);
  };
  return trust;
}

TelemetryRead read_telemetry(const std::filesystem::path& dir, const TelemetryTrust& trust) {
  TelemetryRead out;
  UniqueFd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (dir_fd.get() < 0) return out;
  std::set<std::pair<dev_t, ino_t>> seen;
  const std::string wanted = profiles::telemetry_word(trust.cluster);
  for (const std::string& name : names_in(dir_fd.get())) {
    const std::filesystem::path path = dir / name;
    auto opened = open_telemetry(dir_fd.get(), name);
    if (auto* why = std::get_if<std::string>(&opened)) {
      out.refused.push_back({path, *why});
      continue;
    }
    Opened& o = std::get<Opened>(opened);
    if (!seen.insert({o.st.st_dev, o.st.st_ino}).second) continue;  // another name of a file already read
    profiles::Telemetry t;
    try {
      t = profiles::parse_telemetry(o.text, path.string());
    } catch (const InputError& e) {
      out.refused.push_back({path, "line " + std::to_string(e.line()) + ": " + e.message()});
      continue;
    }
    if (t.cluster != wanted) continue;
    if (auto why = distrust(t, trust)) {
      out.refused.push_back({path, *why});
      continue;
    }
    out.files.push_back({path, std::move(t), user_name(o.st.st_uid)});
  }
  return out;
}

}  // namespace autotune::calibrate
