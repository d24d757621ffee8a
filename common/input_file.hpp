#pragma once
// Opening a file the user named as input, one way for the whole project (profiles, topologies, logs,
// journals, telemetry, CSV): a regular file unless the kind of input allows a pipe ("-" for standard input,
// `<(cmd)`), opened non-blocking so that a FIFO planted under the name cannot hang us, judged on the opened
// descriptor (fstat, never the path a second time), refused at once when it is a directory or device, and
// read up to a size cap. Thread-safe (no shared state).

#include <fcntl.h>
#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <variant>

#include "common/unique_fd.hpp"

namespace autotune {

// What an input is: its name in refusals ("a profile") and the most it may hold.
struct InputKind {
  const char* what;
  uint64_t max_bytes;
  bool pipe_allowed = false;  // a FIFO or "-" (standard input) is meant, e.g. a log piped from a test
  bool follow_links = true;   // false: a symbolic link as the last element is refused (O_NOFOLLOW)
};

// Anything read for a command without a kind of its own.
inline constexpr InputKind kAnyInput{"a file", uint64_t{1} << 30};

struct OpenedInput {
  UniqueFd fd;
  struct stat st {};
};

// The opened input, or why not in one sentence without the path ("expected a profile (a regular file);
// found a directory", "3.1 GiB is over the 64 MiB limit for a profile", "cannot open: No such file or
// directory"). Never throws: the plugin uses it.
// A relative `path` is looked up in the directory open at `dir_fd` (openat), for readers that hold one.
std::variant<OpenedInput, std::string> open_input(const std::filesystem::path& path, const InputKind& kind,
                                                  int dir_fd = AT_FDCWD);

// Appends the rest of `in` to `out`, at most kind.max_bytes; "" or why not.
std::string read_input(const OpenedInput& in, const InputKind& kind, std::string& out);

// Both; throws InputError(path, 0, why).
std::string read_file(const std::filesystem::path& path, const InputKind& kind = kAnyInput);

// Appends everything left to read from the open descriptor `fd` to `out`, retrying reads EINTR interrupts.
// Returns 0, or the errno of the read that failed. For files of our own (lock files) read through the very
// descriptor that was checked.
int read_all(int fd, std::string& out);

}  // namespace autotune
