// The plugin with compiled rules beside its profile (<profile>.rules): the same decisions as from the TOML,
// and the file ignored whenever it does not provably belong to the TOML just read or is not trusted.
#include <stdlib.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <set>

#include "nccl_harness.hpp"
#include "plugin_fixtures.hpp"
#include "profiles/compiled_rules.hpp"
#include "tests/profiles/many_rules.hpp"

using namespace autotune::plugin::test;
using autotune::test::TempDir;
using namespace autotune::nccl;

namespace {

constexpr const char* kProfileEnv = "NCCL_AUTOTUNE_PROFILE";

// The plugin's INFO line for the next communicator names where the rules came from.
std::string init_line(int nodes, int ranks) {
  LogRecorder::instance().take();
  Comm comm(6, ranks, nodes);
  for (const auto& l : LogRecorder::instance().take())
    if (l.level == NCCL_LOG_INFO || l.level == NCCL_LOG_WARN) return l.text;
  return "";
}

bool from_compiled(const std::string& line) {
  return line.find("(TOML, compiled rules, source") != std::string::npos;
}
bool from_toml(const std::string& line) {
  return line.find("(TOML, source") != std::string::npos;
}

void write_profile_and_rules(const std::filesystem::path& path, const autotune::profiles::Profile& p) {
  const std::string text = profile_text(p);
  write_text(path, text);
  autotune::profiles::write_compiled_rules(path, autotune::profiles::parse_profile(text, path.string()),
                                           text);
  ::chmod(autotune::profiles::compiled_rules_path(path).c_str(), 0644);
}

// Every rule's edges and a point inside, for one collective.
std::vector<size_t> probe_sizes(const autotune::profiles::Profile& p, Collective c) {
  std::set<size_t> sizes{0, 1};
  for (const auto& r : p.rules)
    if (r.collective == c)
      for (uint64_t s :
           {r.min_bytes, r.max_bytes, r.max_bytes + 1, r.min_bytes + (r.max_bytes - r.min_bytes) / 2})
        sizes.insert(static_cast<size_t>(s));
  return {sizes.begin(), sizes.end()};
}

// The plugin must trust these files, as a store's would be; a test machine's override would hide the check.
struct NoInsecure {
  std::optional<std::string> old;
  NoInsecure() {
    if (const char* v = getenv("NCCL_AUTOTUNE_INSECURE")) old = v;
    unsetenv("NCCL_AUTOTUNE_INSECURE");
  }
  ~NoInsecure() {
    if (old) setenv("NCCL_AUTOTUNE_INSECURE", old->c_str(), 1);
  }
};

// One AllReduce rule: Tree/LL with 4 channels up to 64 KiB.
autotune::profiles::Profile tree_below_64k() {
  auto profile = base_profile();
  profile.rules = {rule(Collective::allreduce, 0, 65535, Algorithm::tree, Protocol::ll, 4)};
  return profile;
}

}  // namespace

TEST_CASE("with compiled rules present, every decision equals the decision from the TOML alone") {
  NoInsecure secure;
  TempDir dir;
  const auto profile = autotune::profiles::test::many_rules_profile(20);
  const auto with = dir / "with.toml", without = dir / "without.toml";
  write_profile_and_rules(with, profile);
  write_text(without, profile_text(profile));

  // Calibrated scales of each kind, and uncalibrated ones (the profile's policy borrows the nearest).
  const std::pair<int, int> scales[] = {{1, 8}, {3, 24}, {1, 1500}, {2, 16}, {9, 72}};
  size_t steered = 0, compared = 0;
  for (auto [nodes, ranks] : scales) {
    INFO(nodes << " nodes x " << ranks << " ranks");
    std::optional<ScopedEnv> env;
    env.emplace(kProfileEnv, with.string());
    CHECK(from_compiled(init_line(nodes, ranks)));
    Comm a(6, ranks, nodes);
    env.emplace(kProfileEnv, without.string());
    CHECK(from_toml(init_line(nodes, ranks)));
    Comm b(6, ranks, nodes);
    for (Collective c : autotune::nccl::kAllCollectives)
      for (size_t bytes : probe_sizes(profile, c)) {
        INFO("collective " << static_cast<int>(c) << ", " << bytes << " bytes");
        auto da = a.decide(static_cast<int>(c), bytes);
        CHECK(da == b.decide(static_cast<int>(c), bytes));
        steered += !da.table_untouched;
        ++compared;
      }
  }
  // The comparison means something only if the rules steer a good share of the calls.
  CHECK(steered > compared / 4);
}

// A job keeps the profile it first read (plugins/profile_cache.hpp), so the edit is seen by the next job: here a
// second copy of the files under a path this process has not read yet stands for that job's first read.
TEST_CASE("compiled rules left behind by an edit of the TOML are ignored, the edited rules apply") {
  NoInsecure secure;
  TempDir dir;
  const auto path = dir / "profile.toml";
  const auto profile = tree_below_64k();
  write_profile_and_rules(path, profile);
  {
    ScopedEnv env(kProfileEnv, path.string());
    CHECK(from_compiled(init_line(2, 16)));
    Comm comm(6, 16, 2);
    auto d = comm.decide(4, 1000);
    CHECK(d.choice.algorithm == 0);
    CHECK(d.channels == 4);
  }
  // Edited by hand: same size, one word different, so only the digest tells the texts apart.
  std::string text = profile_text(profile);
  const std::string from = "channels = 4", to = "channels = 9";
  REQUIRE(text.find(from) != std::string::npos);
  text.replace(text.find(from), from.size(), to);
  replace_text(path, text);
  const auto next_job = dir / "next";
  std::filesystem::create_directory(next_job);
  std::filesystem::copy_file(path, next_job / "profile.toml");
  std::filesystem::copy_file(autotune::profiles::compiled_rules_path(path),
                             autotune::profiles::compiled_rules_path(next_job / "profile.toml"));
  ScopedEnv env(kProfileEnv, (next_job / "profile.toml").string());
  CHECK(from_toml(init_line(2, 16)));
  Comm comm(6, 16, 2);
  auto d = comm.decide(4, 1000);
  CHECK(d.choice.algorithm == 0);
  CHECK(d.channels == 9);
}

TEST_CASE("compiled rules that are not trusted, or not a regular file, are ignored, the profile loads") {
  NoInsecure secure;
  TempDir dir;
  const auto path = dir / "profile.toml";
  const auto profile = tree_below_64k();
  const auto rules = autotune::profiles::compiled_rules_path(path);
  ScopedEnv env(kProfileEnv, path.string());

  SECTION("trusted: used (the control)") {
    write_profile_and_rules(path, profile);
    CHECK(from_compiled(init_line(2, 16)));
  }
  SECTION("writable by its group") {
    write_profile_and_rules(path, profile);
    REQUIRE(::chmod(rules.c_str(), 0664) == 0);
    CHECK(from_toml(init_line(2, 16)));
  }
  SECTION("a FIFO: not opened for blocking reads, not used") {
    write_text(path, profile_text(profile));
    REQUIRE(::mkfifo(rules.c_str(), 0600) == 0);
    CHECK(from_toml(init_line(2, 16)));
  }
  SECTION("a directory") {
    write_text(path, profile_text(profile));
    std::filesystem::create_directory(rules);
    CHECK(from_toml(init_line(2, 16)));
  }
  Comm comm(6, 16, 2);
  auto d = comm.decide(4, 1000);
  CHECK(d.choice.algorithm == 0);
  CHECK(d.channels == 4);
}
