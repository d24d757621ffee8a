#pragma once
// One run at a time where two would lose data (one calibration per store and name, one `learn` per store):
// an exclusive flock(2) on a lock file, held for the RunLock's lifetime. The kernel drops the lock when its
// holder dies, however it dies, so the lock of a dead holder is taken over by the next run as a matter of
// course, and a live holder's never is; the file itself is never removed (removing it would let two runs
// lock two different files of one name). The holder writes who it is (host, pid, since when, what) into
// the file, so that a run refused names it. flock works across the hosts of an NFS v4 share on Linux (the
// kernel maps it onto NFS byte-range locks). Thread-compatible; the descriptor is close-on-exec, so the
// processes a holder starts do not inherit the lock.

#include <filesystem>
#include <string>

namespace autotune {

class RunLock {
 public:
  // Takes the lock at `path` (creating the file, never following a symbolic link there) for `what` (said
  // in the holder's file: "a calibration of mycluster"), at once or not at all. A lock held by another
  // process throws InputError(path, 0, "expected no other run here before <what>; found <holder's what> (host
  // ..., pid ..., since ...) running: wait for it to finish or stop it ..."). A lock file that cannot be
  // opened or locked (not a regular file, no permission) throws InputError too.
  static RunLock acquire(const std::filesystem::path& path, const std::string& what);

  RunLock(RunLock&& other) noexcept;
  RunLock& operator=(RunLock&& other) noexcept;
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;
  ~RunLock();

  const std::filesystem::path& path() const { return path_; }

 private:
  RunLock(std::filesystem::path path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::filesystem::path path_;
  int fd_ = -1;
};

// Who holds (or last held) the lock at `path`, as its file says: "a calibration of mycluster (host n1, pid
// 4242, since 2026-12-02T10:40:00Z)"; empty when the file says nothing.
std::string lock_holder(const std::filesystem::path& path);

}  // namespace autotune
