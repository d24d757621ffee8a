#include "common/input_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/byte_size.hpp"
#include "common/input_error.hpp"

namespace autotune {
namespace {

const char* kind_of_file(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string over_limit(uint64_t bytes, const InputKind& kind) {
  return human_byte_size(bytes) + " is over the " + human_byte_size(kind.max_bytes) + " limit for " +
         kind.what;
}

}  // namespace

std::variant<OpenedInput, std::string> open_input(const std::filesystem::path& path, const InputKind& kind,
                                                  int dir_fd) {
  OpenedInput in;
  const bool standard_input = kind.pipe_allowed && path == "-";
  // O_NONBLOCK: opening a FIFO no writer holds returns at once instead of waiting for one.
  const int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | (kind.follow_links ? 0 : O_NOFOLLOW);
  in.fd.reset(standard_input ? ::fcntl(0, F_DUPFD_CLOEXEC, 0) : ::openat(dir_fd, path.c_str(), flags));
  if (!in.fd.valid()) {
    if (errno == ELOOP && !kind.follow_links)
      return std::string("expected ") + kind.what + " (a regular file); found a symbolic link (not followed)";
    return std::string("cannot read: ") + std::strerror(errno);
  }
  if (::fstat(in.fd.get(), &in.st) != 0) return std::string("cannot stat: ") + std::strerror(errno);
  const bool pipe = S_ISFIFO(in.st.st_mode) && kind.pipe_allowed;
  if (!S_ISREG(in.st.st_mode) && !pipe)
    return std::string("expected ") + kind.what + " (a regular file" +
           (kind.pipe_allowed ? " or a pipe" : "") + "); found " + kind_of_file(in.st.st_mode);
  // A pipe that is meant is read as a pipe: waiting for its writer.
  if (pipe && !standard_input) ::fcntl(in.fd.get(), F_SETFL, ::fcntl(in.fd.get(), F_GETFL) & ~O_NONBLOCK);
  if (S_ISREG(in.st.st_mode) && static_cast<uint64_t>(in.st.st_size) > kind.max_bytes)
    return over_limit(static_cast<uint64_t>(in.st.st_size), kind);
  return in;
}

std::string read_input(const OpenedInput& in, const InputKind& kind, std::string& out) {
  if (S_ISREG(in.st.st_mode)) out.reserve(out.size() + static_cast<size_t>(in.st.st_size));
  const size_t start = out.size();
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(in.fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::string("cannot read: ") + std::strerror(errno);
    if (n == 0) return "";
    out.append(buffer, static_cast<size_t>(n));
    // A file that grows while read, or a pipe, is held to the same limit.
    if (out.size() - start > kind.max_bytes) return over_limit(out.size() - start, kind) + " (still growing)";
  }
}

std::string read_file(const std::filesystem::path& path, const InputKind& kind) {
  auto opened = open_input(path, kind);
  if (auto* why = std::get_if<std::string>(&opened)) throw InputError(path.string(), 0, *why);
  std::string text;
  if (std::string why = read_input(std::get<OpenedInput>(opened), kind, text); !why.empty())
    throw InputError(path.string(), 0, why);
  return text;
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
