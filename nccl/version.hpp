#pragma once
// NCCL versions: the code NCCL's header and ncclGetVersion give (major*10000 + minor*100 + patch since 2.9,
// major*1000 + minor*100 + patch before), the "2.28.9" text profiles and journals carry, and the major.minor
// that profiles are kept per. Also the version of a libnccl as a process would load it. Value types;
// runtime_version() is thread-safe (dlopen).

#include <compare>
#include <optional>
#include <string>
#include <string_view>

namespace autotune::nccl {

struct Version {
  int major = 0;
  int minor = 0;
  int patch = 0;

  // nullopt for codes no NCCL release has (<= 0).
  static std::optional<Version> from_code(int code);
  // "2.28.9" or "2.28" (patch 0); nullopt for anything else.
  static std::optional<Version> parse(std::string_view text);

  int code() const { return major * 10000 + minor * 100 + patch; }
  std::string text() const;                                // "2.28.9"
  std::string major_minor_text() const;                    // "2.28"
  int major_minor() const { return major * 100 + minor; }  // 228
  bool same_major_minor(const Version& o) const { return major == o.major && minor == o.minor; }
  auto operator<=>(const Version&) const = default;
};

// The version ncclGetVersion reports in a library opened by `library` ("libnccl.so.2": what the dynamic
// loader finds for this process, LD_LIBRARY_PATH included; or a path). nullopt with *why set when it cannot
// be opened or has no ncclGetVersion.
std::optional<Version> runtime_version(const std::string& library, std::string* why = nullptr);

}  // namespace autotune::nccl
