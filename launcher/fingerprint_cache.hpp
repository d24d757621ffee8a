#pragma once
// This node's fingerprint, probed once per boot and then read from a small cache file, so that hundreds of
// ranks starting at once on a node do not all walk the PCI tree. The cache lives in a directory only the
// user can write ($NCCL_AUTOTUNE_CACHE_DIR, else $XDG_RUNTIME_DIR/nccl-autotune, else
// /tmp/nccl-autotune-<uid>); an entry counts only when its boot id (/proc/sys/kernel/random/boot_id) and key
// (the NCCL version and tool version the fingerprint was made for) match. Ranks starting together serialise
// on a lock file there: the first probes and writes, the others read its result. A directory or file that
// is not the user's own is never read or written; the probe then runs uncached.
// Thread-safe across processes (file lock); one call at a time per process.

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace autotune::launcher {

struct FingerprintLookup {
  std::string fingerprint;
  bool from_cache = false;
  std::string note;  // why the cache was not used, when it was not (empty otherwise)
};

class FingerprintCache {
 public:
  using Probe = std::function<std::string()>;

  // `dir` empty: the default directory above. `boot_id_file` is a seam for tests.
  explicit FingerprintCache(std::filesystem::path dir = {},
                            std::filesystem::path boot_id_file = "/proc/sys/kernel/random/boot_id");

  // The cached fingerprint for `key` in this boot, or probe() (then stored). Exceptions from probe()
  // propagate and nothing is stored.
  FingerprintLookup get(const std::string& key, const Probe& probe) const;

  // The entry for `key` in this boot, if there is a trusted one.
  std::optional<std::string> peek(const std::string& key) const;

  // Stores an entry (tests prepare a warm cache this way). Throws std::runtime_error when the directory
  // cannot be made safe.
  void put(const std::string& key, const std::string& fingerprint) const;

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path file() const { return dir_ / "fingerprint"; }

  static std::filesystem::path default_dir();

 private:
  std::optional<std::string> boot_id() const;
  // nullopt when the directory is (or was made) the user's own, 0700; otherwise why not.
  std::optional<std::string> prepare_dir(bool create) const;

  std::filesystem::path dir_;
  std::filesystem::path boot_id_file_;
};

}  // namespace autotune::launcher
