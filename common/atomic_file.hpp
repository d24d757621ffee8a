#pragma once
// Writing a file so that readers see the old content or the new, never a half-written one: a temporary file
// in the same directory, flushed to disk, then renamed over the target (rename is atomic within a directory).

#include <filesystem>
#include <string>
#include <string_view>

namespace autotune {

// Throws std::runtime_error (with the path and errno text) when any step fails; the target is then untouched
// and the temporary file removed.
void write_file_atomically(const std::filesystem::path& target, std::string_view content);

// Reads a whole file; throws InputError naming the file when it cannot be read.
std::string read_file(const std::filesystem::path& path);

// Appends everything left to read from the open descriptor `fd` to `out`, retrying reads EINTR interrupts.
// Returns 0, or the errno of the read that failed. For callers that must read the very file they checked
// with fstat (identity, regular file), not open its path a second time.
int read_all(int fd, std::string& out);

}  // namespace autotune
