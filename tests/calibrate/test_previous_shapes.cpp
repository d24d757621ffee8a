// Issue 14: a recalibration of some shapes and the rules the store's current version holds for the others:
// kept with --add-shapes (and only when they can join), named as dropped without it.
#include <catch2/catch.hpp>
#include <filesystem>

#include "calibrate/previous_shapes.hpp"
#include "common/input_error.hpp"
#include "profiles/profile_toml.hpp"
#include "profiles/store.hpp"

using namespace autotune;
using namespace autotune::search;
using namespace autotune::calibrate;
using profiles::CountRange;
using profiles::Profile;
using profiles::Rule;

namespace {

Rule rule(int nodes, int per_node, nccl::Algorithm a, nccl::Protocol p) {
  Rule r;
  r.collective = nccl::Collective::allreduce;
  r.min_bytes = 4096;
  r.max_bytes = 65536;
  r.nodes = CountRange{nodes, nodes};
  r.ranks_per_node = CountRange{per_node, per_node};
  r.algorithm = a;
  r.protocol = p;
  return r;
}

Profile profile(std::vector<Rule> rules) {
  Profile p;
  p.cluster.name = "lab";
  p.cluster.fingerprint = "0123456789abcdef";
  p.provenance.created = "2026-12-01T00:00:00Z";
  p.provenance.nccl_version = "2.28.9";
  p.provenance.source = profiles::Source::simulated;
  p.rules = std::move(rules);
  return p;
}

const std::vector<runners::Scale> kMeasured = {{2, 2}};  // the data parallel pairs, one rank per node

}  // namespace

TEST_CASE(
    "tune --add-shapes keeps the previous rules of shapes not measured now, replaces the measured ones") {
  const PreviousVersion previous{"lab.toml",
                                 profile({rule(1, 8, nccl::Algorithm::ring, nccl::Protocol::ll128),
                                          rule(2, 1, nccl::Algorithm::ring, nccl::Protocol::ll)})};
  Profile fresh = profile({rule(2, 1, nccl::Algorithm::tree, nccl::Protocol::ll)});
  std::vector<std::string> notes;
  carry_previous_shapes(fresh, previous, kMeasured, true, notes);
  REQUIRE(fresh.rules.size() == 2);  // the 1x8 rule kept, the old 2x1 rule replaced by the new
  CHECK(std::count_if(fresh.rules.begin(), fresh.rules.end(),
                      [](const Rule& r) { return r.algorithm == nccl::Algorithm::tree; }) == 1);
  CHECK(std::count_if(fresh.rules.begin(), fresh.rules.end(),
                      [](const Rule& r) { return r.protocol == nccl::Protocol::ll128; }) == 1);
  REQUIRE(notes.size() == 1);
  CHECK(notes[0] == "--add-shapes: kept the previous version's 1 rule(s) of shapes not calibrated now (1x8)");
}

TEST_CASE("tune without --add-shapes the new version holds what was measured, and says what it dropped") {
  const PreviousVersion previous{"lab.toml",
                                 profile({rule(1, 8, nccl::Algorithm::ring, nccl::Protocol::ll128)})};
  Profile fresh = profile({rule(2, 1, nccl::Algorithm::tree, nccl::Protocol::ll)});
  std::vector<std::string> notes;
  carry_previous_shapes(fresh, previous, kMeasured, false, notes);
  CHECK(fresh.rules.size() == 1);
  REQUIRE(notes.size() == 1);
  CHECK(
      notes[0].find("the previous version's 1 rule(s) of shapes not calibrated now (1x8) are not in the new "
                    "version") == 0);
  // Nothing of another shape: nothing to say.
  notes.clear();
  carry_previous_shapes(fresh, {"lab.toml", profile({rule(2, 1, nccl::Algorithm::ring, nccl::Protocol::ll)})},
                        kMeasured, false, notes);
  CHECK(notes.empty());
}

TEST_CASE("tune --add-shapes refuses rules measured under other settings, and a version of another node") {
  Profile old = profile({rule(1, 8, nccl::Algorithm::ring, nccl::Protocol::ll128)});
  old.env = {{"NCCL_CROSS_NIC", "1"}};
  Profile fresh = profile({rule(2, 1, nccl::Algorithm::tree, nccl::Protocol::ll)});
  std::vector<std::string> notes;
  CHECK_THROWS_WITH(carry_previous_shapes(fresh, {"lab.toml", old}, kMeasured, true, notes),
                    Catch::Contains("(--add-shapes; the journal holds this calibration"));

  const auto store =
      std::filesystem::temp_directory_path() / ("autotune-previous-" + std::to_string(::getpid()));
  std::filesystem::remove_all(store);
  profiles::Store(store).save(profile({}));
  JournalHeader h;
  h.cluster = "lab";
  h.nccl_version = "2.28.9";
  h.fingerprint = "fedcba9876543210";
  CHECK_THROWS_WITH(
      current_version(store, h, true),
      Catch::Contains("--add-shapes: expected a current version made under the same conditions, "
                      "found fingerprint 0123456789abcdef where this calibration has "
                      "fedcba9876543210"));
  CHECK(current_version(store, h, false));  // replaced as usual without --add-shapes
  h.fingerprint = "0123456789abcdef";
  CHECK(current_version(store, h, true)->profile.cluster.name == "lab");
  h.nccl_version = "2.29.1";  // another NCCL has its own profile file: nothing to add to
  CHECK_FALSE(current_version(store, h, true));
  std::filesystem::remove_all(store);
}
