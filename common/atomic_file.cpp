#include "common/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
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

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string(), 0, std::string("cannot read: ") + std::strerror(errno));
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) throw InputError(path.string(), 0, "read error");
  return std::move(out).str();
}

int read_all(int fd, std::string& out) {
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return 0;
    out.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace autotune
