#include "common/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>

#include "common/input_error.hpp"

namespace autotune {
namespace {

[[noreturn]] void fail(const std::string& what, const std::filesystem::path& path, int err) {
  throw std::runtime_error(what + " " + path.string() + ": " + std::strerror(err));
}

void write_all(int fd, std::string_view content, const std::filesystem::path& path) {
  while (!content.empty()) {
    ssize_t n = ::write(fd, content.data(), content.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("cannot write", path, errno);
    }
    content.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace

void write_file_atomically(const std::filesystem::path& target, std::string_view content) {
  // The rename below would turn /dev/null, a FIFO or a symbolic link into a regular file of ours.
  struct stat there {};
  if (::lstat(target.c_str(), &there) == 0 && !S_ISREG(there.st_mode))
    throw InputError(target.string(), 0,
                     std::string("expected a regular file to replace (or none); found ") +
                         (S_ISLNK(there.st_mode)    ? "a symbolic link"
                          : S_ISDIR(there.st_mode)  ? "a directory"
                          : S_ISFIFO(there.st_mode) ? "a FIFO"
                                                    : "a device or socket") +
                         ", left as it is");
  std::filesystem::path dir =
      target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  std::string tmpl = (dir / ("." + target.filename().string() + ".tmp.XXXXXX")).string();
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) fail("cannot create a temporary file in", dir, errno);
  std::filesystem::path tmp = tmpl;
  try {
    write_all(fd, content, tmp);
    // mkstemp makes the file 0600; a profile is meant to be read by every user of the cluster.
    if (::fchmod(fd, 0644) != 0) fail("cannot set permissions of", tmp, errno);
    if (::fsync(fd) != 0) fail("cannot flush", tmp, errno);
    if (::close(fd) != 0) {
      fd = -1;
      fail("cannot close", tmp, errno);
    }
    fd = -1;
    if (::rename(tmp.c_str(), target.c_str()) != 0) fail("cannot rename onto", target, errno);
  } catch (...) {
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  // Make the rename itself durable.
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void finish_standard_output() {
  // std::cout writes through stdout (synchronised with stdio), so the first failed flush has the reason.
  errno = 0;
  std::cout.flush();
  int err = std::cout ? 0 : errno;
  if (std::fflush(stdout) != 0 && err == 0) err = errno;
  const bool failed = err != 0 || std::ferror(stdout) || !std::cout;
  if (!failed) return;
  std::clearerr(stdout);
  // A write that failed in the middle of the output left no errno behind: then the reason is not known.
  throw std::runtime_error(std::string("cannot write to standard output") +
                           (err ? std::string(": ") + std::strerror(err) : " (a write failed)"));
}

}  // namespace autotune
