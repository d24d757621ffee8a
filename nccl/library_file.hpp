#pragma once
// The NCCL version of a libnccl file, read without loading it (loading a 200 MB libnccl costs a launch
// tenths of a second and maps CUDA). Two ways, cheapest first: the file's real name as NCCL's own build
// installs it (libnccl.so.2.28.9, what libnccl.so.2 links to), then the banner every libnccl carries in its
// read-only data ("NCCL version 2.28.9+cuda13.0", the line NCCL prints at init), found through the ELF
// section headers so that only that section is read, not the device code. Python wheels ship only
// libnccl.so.2, so the second way is the usual one there. Thread-safe.

#include <filesystem>
#include <optional>
#include <string>

#include "nccl/version.hpp"

namespace autotune::nccl {

// nullopt with *why set (one clause: the file and what was wrong) when neither way gives a version.
std::optional<Version> library_file_version(const std::filesystem::path& file, std::string* why);

// The version in a libnccl file name: "libnccl.so.2.28.9" -> 2.28.9; nullopt for "libnccl.so.2" and others.
std::optional<Version> version_from_file_name(const std::string& name);

// The version in the text that follows NCCL's banner "NCCL version " ("2.28.9+cuda13.0" -> 2.28.9).
std::optional<Version> version_from_banner(std::string_view text);

}  // namespace autotune::nccl
