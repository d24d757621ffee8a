#pragma once
// Writing outputs. A file so that readers see the old content or the new, never a half-written one: a
// temporary file in the same directory, flushed to disk, then renamed over the target (rename is atomic
// within a directory). Standard output so that a write that failed (a full disk, /dev/full, a closed pipe)
// fails the command instead of passing unseen.

#include <filesystem>
#include <string>
#include <string_view>

namespace autotune {

// Throws std::runtime_error (with the path and errno text) when any step fails; the target is then untouched
// and the temporary file removed. A target that exists and is not a regular file (a device, a FIFO, a
// symbolic link, a directory) is never replaced: InputError(target, 0, "expected a regular file to replace
// ...").
void write_file_atomically(const std::filesystem::path& target, std::string_view content);

// Flushes std::cout and stdout; throws std::runtime_error("cannot write to standard output: No space left on
// device", the reason where it is known) when that or any earlier write to them failed.
void finish_standard_output();

}  // namespace autotune
