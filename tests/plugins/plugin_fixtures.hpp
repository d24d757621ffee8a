#pragma once
// Test-side helpers for the plugin tests: a private temporary directory, profile files written from Profile
// values (through the project's own writer, so the tests do not depend on the TOML layout), and a scoped
// environment variable.

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "profiles/profile.hpp"
#include "profiles/profile_toml.hpp"
#include "tests/support/temp_dir.hpp"

namespace autotune::plugin::test {

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// Replaces the file the way a store does (write elsewhere, rename over): a new inode every time.
inline void replace_text(const std::filesystem::path& path, const std::string& text) {
  auto tmp = path;
  tmp += ".new";
  write_text(tmp, text);
  std::filesystem::rename(tmp, path);
}

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

inline profiles::Rule rule(nccl::Collective c, uint64_t min_bytes, uint64_t max_bytes, nccl::Algorithm a,
                           nccl::Protocol p, int channels = 0, std::optional<profiles::CountRange> nodes = {},
                           std::optional<profiles::CountRange> ranks = {}) {
  profiles::Rule r;
  r.collective = c;
  r.min_bytes = min_bytes;
  r.max_bytes = max_bytes;
  r.algorithm = a;
  r.protocol = p;
  r.channels = channels;
  r.nodes = nodes;
  r.ranks = ranks;
  return r;
}

inline profiles::Profile base_profile() {
  profiles::Profile p;
  p.cluster.name = "testcluster";
  p.cluster.gpu_model = "H100";
  p.cluster.gpus_per_node = 8;
  p.cluster.nodes = 2;
  p.provenance.created = "2026-01-01T00:00:00Z";
  p.provenance.tool_version = "0.1.0";
  p.provenance.nccl_version = "2.28.9";
  p.provenance.source = profiles::Source::simulated;
  return p;
}

inline std::string profile_text(const profiles::Profile& p) {
  return profiles::format_profile(p);
}

// A profile file in a directory of its own, named to the plugin by `var` while it lives.
struct ProfileFile {
  autotune::test::TempDir dir;
  std::filesystem::path path;
  std::optional<ScopedEnv> env;
  explicit ProfileFile(const std::string& text, const char* var = "NCCL_AUTOTUNE_PROFILE",
                       const std::string& name = "profile.toml") {
    path = dir / name;
    write_text(path, text);
    env.emplace(var, path.string());
  }
};

}  // namespace autotune::plugin::test
