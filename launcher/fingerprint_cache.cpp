#include "launcher/fingerprint_cache.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/atomic_file.hpp"

namespace autotune::launcher {
namespace fs = std::filesystem;

namespace {

constexpr const char* kFormat = "nccl-autotune-fingerprint-cache 1";

// The entry format: four lines (format, boot id, key, fingerprint). Keys and fingerprints are one line each.
std::string serialise(const std::string& boot, const std::string& key, const std::string& fingerprint) {
  return std::string(kFormat) + "\n" + boot + "\n" + key + "\n" + fingerprint + "\n";
}

bool one_line(const std::string& s) {
  return !s.empty() && s.find('\n') == std::string::npos;
}

// Holds an exclusive lock on a file for its lifetime; inactive when the file could not be opened.
class FileLock {
 public:
  explicit FileLock(const fs::path& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace

FingerprintCache::FingerprintCache(fs::path dir, fs::path boot_id_file)
    : dir_(dir.empty() ? default_dir() : std::move(dir)), boot_id_file_(std::move(boot_id_file)) {}

fs::path FingerprintCache::default_dir() {
  if (const char* v = std::getenv("NCCL_AUTOTUNE_CACHE_DIR"); v && *v) return v;
  if (const char* v = std::getenv("XDG_RUNTIME_DIR"); v && *v) return fs::path(v) / "nccl-autotune";
  return fs::path("/tmp") / ("nccl-autotune-" + std::to_string(::geteuid()));
}

std::optional<std::string> FingerprintCache::boot_id() const {
  std::ifstream in(boot_id_file_);
  std::string id;
  if (!(in >> id) || id.empty()) return std::nullopt;
  return id;
}

std::optional<std::string> FingerprintCache::prepare_dir(bool create) const {
  struct stat st {};
  if (::lstat(dir_.c_str(), &st) != 0) {
    if (errno != ENOENT || !create) return dir_.string() + ": " + std::strerror(errno);
    std::error_code ec;
    fs::create_directories(dir_.parent_path(), ec);
    if (::mkdir(dir_.c_str(), 0700) != 0 && errno != EEXIST)
      return "cannot create " + dir_.string() + ": " + std::strerror(errno);
    if (::lstat(dir_.c_str(), &st) != 0) return dir_.string() + ": " + std::strerror(errno);
  }
  // In a shared /tmp someone else may have made the directory first, to feed us a fingerprint.
  if (!S_ISDIR(st.st_mode)) return dir_.string() + " is not a directory";
  if (st.st_uid != ::geteuid())
    return dir_.string() + " belongs to uid " + std::to_string(st.st_uid) + ", not to you";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return dir_.string() + " is writable by others";
  return std::nullopt;
}

std::optional<std::string> FingerprintCache::peek(const std::string& key) const {
  if (prepare_dir(false)) return std::nullopt;
  const auto boot = boot_id();
  if (!boot) return std::nullopt;
  const fs::path path = file();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  bool ours = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() &&
              !(st.st_mode & (S_IWGRP | S_IWOTH)) && st.st_size < 4096;
  std::string content;
  if (ours) {
    content.resize(static_cast<size_t>(st.st_size));
    ssize_t n = ::read(fd, content.data(), content.size());
    if (n < 0) content.clear();
    content.resize(n < 0 ? 0 : static_cast<size_t>(n));
  }
  ::close(fd);
  std::istringstream in(content);
  std::string format, file_boot, file_key, fingerprint;
  if (!std::getline(in, format) || format != kFormat) return std::nullopt;
  if (!std::getline(in, file_boot) || file_boot != *boot) return std::nullopt;
  if (!std::getline(in, file_key) || file_key != key) return std::nullopt;
  if (!std::getline(in, fingerprint) || fingerprint.empty()) return std::nullopt;
  return fingerprint;
}

void FingerprintCache::put(const std::string& key, const std::string& fingerprint) const {
  if (!one_line(key) || !one_line(fingerprint))
    throw std::runtime_error("fingerprint cache: key and fingerprint must be one non-empty line each");
  if (auto why = prepare_dir(true)) throw std::runtime_error("fingerprint cache unusable: " + *why);
  const auto boot = boot_id();
  if (!boot) throw std::runtime_error("fingerprint cache: cannot read " + boot_id_file_.string());
  write_file_atomically(file(), serialise(*boot, key, fingerprint));
}

FingerprintLookup FingerprintCache::get(const std::string& key, const Probe& probe) const {
  FingerprintLookup out;
  if (auto hit = peek(key)) {
    out.fingerprint = *hit;
    out.from_cache = true;
    return out;
  }
  if (auto why = prepare_dir(true)) {
    out.note = "fingerprint cache not used: " + *why;
    out.fingerprint = probe();
    return out;
  }
  if (!boot_id()) {
    out.note = "fingerprint cache not used: cannot read " + boot_id_file_.string();
    out.fingerprint = probe();
    return out;
  }
  // Cold cache: the first rank to take the lock probes, the ones queued behind it find its entry.
  FileLock lock(dir_ / "fingerprint.lock");
  if (auto hit = peek(key)) {
    out.fingerprint = *hit;
    out.from_cache = true;
    return out;
  }
  out.fingerprint = probe();
  try {
    put(key, out.fingerprint);
  } catch (const std::exception& e) {
    out.note = std::string("fingerprint not cached: ") + e.what();
  }
  return out;
}

}  // namespace autotune::launcher
