#include "profiles/file_trust.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <vector>

namespace autotune::profiles {
namespace {

namespace fs = std::filesystem;

std::string octal_mode(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// Every element from the root down to `p` itself.
std::vector<fs::path> elements(const fs::path& p) {
  std::vector<fs::path> out;
  fs::path acc;
  for (const auto& part : p) {
    acc /= part;
    out.push_back(acc);
  }
  return out;
}

std::optional<std::string> check_chain(const fs::path& path, uid_t target_owner, uid_t self) {
  for (const fs::path& element : elements(path)) {
    struct stat st {};
    if (::lstat(element.c_str(), &st) != 0)
      return element.string() + " cannot be examined: " + std::strerror(errno);
    if (st.st_uid != 0 && st.st_uid != self && st.st_uid != target_owner)
      return element.string() + " is owned by uid " + std::to_string(st.st_uid) +
             ", who is neither root, you nor the owner of " + path.string();
    // A symbolic link's own mode is always 0777 and means nothing; its owner and directory are what count.
    if (S_ISLNK(st.st_mode)) continue;
    const bool sticky_dir = S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX);
    if (sticky_dir && element != path) continue;
    if (st.st_mode & S_IWOTH)
      return element.string() + " is writable by everyone (mode " + octal_mode(st.st_mode) + ")";
    if (st.st_mode & S_IWGRP)
      return element.string() + " is writable by its group (mode " + octal_mode(st.st_mode) + ")";
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> untrusted_reason(const fs::path& path, const struct stat* opened) {
  std::error_code ec;
  // Not lexically normalised: "dir/link/../file" is read through the link's target's parent, and so is
  // checked (lstat resolves each element as open will).
  const fs::path given = fs::absolute(path, ec);
  if (ec) return path.string() + " cannot be examined: " + ec.message();
  const fs::path resolved = fs::canonical(given, ec);
  if (ec) return path.string() + " cannot be examined: " + ec.message();
  struct stat target {};
  if (::stat(resolved.c_str(), &target) != 0)
    return resolved.string() + " cannot be examined: " + std::strerror(errno);
  if (opened && (opened->st_dev != target.st_dev || opened->st_ino != target.st_ino))
    return path.string() + " changed while it was being checked (another file is there now)";
  const uid_t self = ::geteuid();
  // The path as written matters too: whoever can swap a symbolic link on the way decides what is read.
  if (auto reason = check_chain(given, target.st_uid, self)) return reason;
  if (resolved != given) return check_chain(resolved, target.st_uid, self);
  return std::nullopt;
}

bool insecure_allowed() {
  const char* v = std::getenv("NCCL_AUTOTUNE_INSECURE");
  return v && std::strcmp(v, "1") == 0;
}

}  // namespace autotune::profiles
