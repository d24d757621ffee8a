// The profile store survives a writer killed at any point: a child saves profiles through Store::save over
// and over and is killed with SIGKILL a few hundred times; after each kill every profile the store lists (and
// every .prev it keeps) reads and validates, and is exactly one complete generation the writer produced (the
// old one or a newer one), never a mix or a truncation; compiled rules beside a profile are its own or
// refused.

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/atomic_file.hpp"
#include "kill_loop.hpp"
#include "profiles/compiled_rules.hpp"
#include "profiles/profile_toml.hpp"
#include "profiles/store.hpp"

namespace fs = std::filesystem;
using namespace autotune::profiles;
using namespace autotune::nccl;
using autotune::test::TempDir;

namespace {

constexpr int kFiles = 3;

// Generation `gen` of profile `file`: the generation shows in the provenance and in the rules (their count
// and byte ranges), so a mix of two generations cannot pass as either.
Profile generation(int file, int gen) {
  Profile p;
  p.cluster.name = "cluster-" + std::to_string(file);
  p.cluster.fingerprint = "h100x8-ndr400x8";
  p.cluster.gpu_model = "H100 80GB HBM3";
  p.cluster.gpus_per_node = 8;
  p.cluster.nodes = 4;
  p.cluster.nics_per_node = 8;
  p.provenance.created = "2026-11-30T05:00:00Z";
  p.provenance.tool_version = "0.1.0";
  p.provenance.nccl_version = "2.28.9";
  p.provenance.source = Source::simulated;
  p.provenance.command = "reliability kill test, generation " + std::to_string(gen);
  p.env["NCCL_CROSS_NIC"] = std::to_string(gen % 3);
  const int rules = 1 + gen % 40;
  uint64_t start = 0;
  for (int i = 0; i < rules; ++i) {
    Rule r;
    r.collective = Collective::allreduce;
    r.min_bytes = start;
    r.max_bytes = start + 1023 + static_cast<uint64_t>(gen);
    start = r.max_bytes + 1;
    r.algorithm = i % 2 ? Algorithm::tree : Algorithm::ring;
    r.protocol = Protocol::simple;
    p.rules.push_back(r);
  }
  return p;
}

int generation_of(const Profile& p) {
  const std::string prefix = "reliability kill test, generation ";
  REQUIRE(p.provenance.command.rfind(prefix, 0) == 0);
  return std::stoi(p.provenance.command.substr(prefix.size()));
}

int file_of(const Profile& p) {
  REQUIRE(p.cluster.name.rfind("cluster-", 0) == 0);
  return std::stoi(p.cluster.name.substr(8));
}

// Reads one stored file and checks it is one whole generation of its profile; returns the generation.
int check_whole(const fs::path& path) {
  INFO(path.string());
  Profile p;
  REQUIRE_NOTHROW(p = read_profile(path));
  const int gen = generation_of(p);
  const std::string want = format_profile(generation(file_of(p), gen));
  REQUIRE(format_profile(p) == want);
  REQUIRE(autotune::read_file(path) == want);
  return gen;
}

}  // namespace

TEST_CASE("store: profiles survive a writer killed at random points, old or new, never half",
          "[reliability]") {
  TempDir dir("kill-store");
  const Store store(dir.path() / "store");
  std::map<int, int> current;  // file -> generation on disk
  std::map<int, fs::path> paths;
  for (int f = 0; f < kFiles; ++f) {
    paths[f] = store.save(generation(f, 0));
    current[f] = 0;
  }
  unsigned seed = 0;
  auto rng = autotune::reliability::kill_rng(seed);
  INFO("AUTOTUNE_KILL_SEED=" << seed);
  // One generation (three saves: validate, copy to .prev, temporary file, fsync, rename) takes from a
  // millisecond to tens on a loaded disk; delays span up to four generations so kills land at every step.
  const int cycle_us = autotune::reliability::measure_us(
      [&] {
        for (int f = 0; f < kFiles; ++f) store.save(generation(f, 0));
      },
      3);
  std::uniform_int_distribution<int> delay_us(0, 4 * cycle_us);

  const autotune::reliability::KillBudget budget;
  int kills = 0, advanced = 0, died_early = 0, mid_write = 0, compiled_used = 0;
  size_t debris = 0;
  for (; budget.more(kills); ++kills) {
    const int next = 1 + std::max({current[0], current[1], current[2]});
    const bool killed = autotune::reliability::run_and_kill(
        [&] {
          for (int gen = next;; ++gen)
            for (int f = 0; f < kFiles; ++f) store.save(generation(f, gen));
        },
        std::chrono::microseconds(delay_us(rng)));
    if (!killed) ++died_early;
    // A kill inside write_file_atomically leaves its temporary file (.NAME.tmp.XXXXXX) behind: count those
    // kills. (Beside each profile the store keeps its .prev and its compiled .rules.)
    size_t temporaries = 0;
    for (const auto& e : fs::directory_iterator(store.dir()))
      temporaries += e.path().filename().string().find(".tmp.") != std::string::npos ? 1 : 0;
    if (temporaries > debris) ++mid_write;
    debris = temporaries;
    // Every profile the store lists is valid; the three profiles are all there.
    const auto listed = store.list();
    int profiles = 0;
    for (const auto& entry : listed) {
      INFO(entry.file.string() << ": " << entry.error);
      REQUIRE(entry.profile.has_value());
      ++profiles;
    }
    REQUIRE(profiles == kFiles);
    for (int f = 0; f < kFiles; ++f) {
      const int gen = check_whole(paths[f]);
      REQUIRE(gen >= current[f]);  // old or new, never older than what was there
      if (gen > current[f]) ++advanced;
      current[f] = gen;
      fs::path prev = paths[f];
      prev += ".prev";
      if (fs::exists(prev)) REQUIRE(check_whole(prev) <= gen);
      // The compiled rules beside it are the TOML's own rules, or are refused (a kill between the two
      // writes leaves the older generation's, bound to the older text): never other rules.
      const fs::path compiled = compiled_rules_path(paths[f]);
      if (fs::exists(compiled)) {
        const std::string text = autotune::read_file(paths[f]);
        if (const auto fast =
                read_with_compiled_rules(text, autotune::read_file(compiled), paths[f].string())) {
          const Profile parsed = parse_profile(text, paths[f].string());
          REQUIRE(fast->rules.size() == parsed.rules.size());
          for (size_t i = 0; i < parsed.rules.size(); ++i) {
            REQUIRE(fast->rules[i].min_bytes == parsed.rules[i].min_bytes);
            REQUIRE(fast->rules[i].max_bytes == parsed.rules[i].max_bytes);
            REQUIRE(fast->rules[i].algorithm == parsed.rules[i].algorithm);
          }
          ++compiled_used;
        }
      }
    }
  }
  CHECK(died_early == 0);
  // The kills must have interrupted real work, not an idle child: profiles moved on, and some kills left a
  // temporary file (they landed between its creation and the rename).
  INFO("kills " << kills << ", profiles advanced " << advanced << ", kills inside a write " << mid_write);
  CHECK(advanced >= std::max(10, kills / 10));
  CHECK(mid_write >= 5);
  CHECK(compiled_used > 0);
  if (kills < budget.kills)
    WARN("store kill test: " << kills << " kills within the time budget (cycle " << cycle_us << " us)");
}
