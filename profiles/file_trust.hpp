#pragma once
// Whether a profile (or a store directory) can be trusted, by the rule ssh applies to its keys: nobody but
// the file's owner, the user running us, or root may be able to change what we would read. A profile steers
// every collective of every job and names settings NCCL obeys, so one that a stranger could rewrite is not
// used. Shared by the launcher and the plugin (which must never print: the reason is returned, not logged).
// Thread-safe (reads file metadata only).

#include <sys/stat.h>

#include <filesystem>
#include <optional>
#include <string>

namespace autotune::profiles {

// nullopt when `path` and every directory above it are safe; otherwise one sentence naming the first
// offender and why ("/shared/store is writable by its group (mode 0775)"). Checked: the path as given
// and the path with symbolic links resolved; each element's owner (root, the effective user or the
// target's owner) and mode (no group or other write bit, except a sticky directory such as /tmp, where
// only an entry's owner can rename or remove it). A path that does not exist is reported as such.
// POSIX ACLs are not consulted. `opened`, when given, is fstat of the descriptor the caller will read:
// the resolved path must name that very file (or the answer is that it changed while being checked).
std::optional<std::string> untrusted_reason(const std::filesystem::path& path,
                                            const struct stat* opened = nullptr);

// NCCL_AUTOTUNE_INSECURE=1 turns the check off (a test machine, a container whose mounts show odd owners).
bool insecure_allowed();

}  // namespace autotune::profiles
