#include "common/run_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <utility>

#include "common/host_name.hpp"
#include "common/input_error.hpp"
#include "common/input_file.hpp"

namespace autotune {
namespace {

std::string now_utc() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

// What the holder's file says, one line per fact: "host n1\npid 4242\nsince ...\nwhat tune of x\n", as
// "tune of x (host n1, pid 4242, since ...)"; empty when it names no pid.
std::string describe_holder(const std::string& text) {
  std::string host, pid, since, what;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    const size_t space = line.find(' ');
    if (space == std::string::npos) continue;
    const std::string key = line.substr(0, space), value = line.substr(space + 1, 200);
    if (key == "host") host = value;
    if (key == "pid") pid = value;
    if (key == "since") since = value;
    if (key == "what") what = value;
  }
  if (pid.empty()) return "";
  return (what.empty() ? std::string("another run") : what) + " (host " +
         (host.empty() ? std::string("?") : host) + ", pid " + pid + ", since " +
         (since.empty() ? std::string("?") : since) + ")";
}

std::string read_holder(int fd) {
  std::string text;
  if (::lseek(fd, 0, SEEK_SET) != 0) return "";
  if (read_all(fd, text) != 0) return "";
  if (text.size() > 4096) text.resize(4096);
  return describe_holder(text);
}

}  // namespace

RunLock RunLock::acquire(const std::filesystem::path& path, const std::string& what) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (fd < 0)
    throw InputError(path.string(), 0,
                     std::string("expected a lock file this user can open; cannot: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InputError(path.string(), 0, "expected a regular file as the lock file; found something else");
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const std::string holder = err == EWOULDBLOCK ? read_holder(fd) : "";
    ::close(fd);
    if (err != EWOULDBLOCK)
      throw InputError(path.string(), 0, std::string("cannot lock: ") + std::strerror(err));
    throw InputError(
        path.string(), 0,
        "expected no other run here before " + what + "; found " +
            (holder.empty() ? std::string("another run (starting, not yet named)") : holder) +
            " running: wait for it to finish or stop it (a holder that dies releases it by itself)");
  }
  // Ours now (a dead holder's lock went with it): say who holds it. A failed write leaves the lock held,
  // with the holder unnamed: it still does its job.
  const std::string text = "host " + host_name() + "\npid " + std::to_string(::getpid()) + "\nsince " +
                           now_utc() + "\nwhat " + what + "\n";
  if (::ftruncate(fd, 0) == 0) {
    [[maybe_unused]] const ssize_t n = ::pwrite(fd, text.data(), text.size(), 0);
  }
  return RunLock(path, fd);
}

RunLock::RunLock(RunLock&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

RunLock& RunLock::operator=(RunLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

RunLock::~RunLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

std::string lock_holder(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return "";
  const std::string holder = read_holder(fd);
  ::close(fd);
  return holder;
}

}  // namespace autotune
