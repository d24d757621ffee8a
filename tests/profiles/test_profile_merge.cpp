// Joining calibrations of one cluster: shapes calibrated apart join; anything that would change what either
// side measured, or a call that two rules would decide differently, is refused naming both sides.
#include <catch2/catch.hpp>

#include "common/input_error.hpp"
#include "profiles/profile_merge.hpp"
#include "profiles/profile_toml.hpp"

using namespace autotune::profiles;
using autotune::nccl::Algorithm;
using autotune::nccl::Collective;
using autotune::nccl::Protocol;

namespace {

Rule rule(uint64_t lo, uint64_t hi, int nodes, int per_node, Algorithm a = Algorithm::ring,
          Protocol p = Protocol::ll128) {
  Rule r;
  r.collective = Collective::allreduce;
  r.min_bytes = lo;
  r.max_bytes = hi;
  r.algorithm = a;
  r.protocol = p;
  r.nodes = CountRange{nodes, nodes};
  r.ranks = CountRange{nodes * per_node, nodes * per_node};
  r.ranks_per_node = CountRange{per_node, per_node};
  return r;
}

Profile calibration(std::vector<Rule> rules, int nodes) {
  Profile p;
  p.cluster.name = "eos";
  p.cluster.fingerprint = "d9ab18f09072d686";
  p.cluster.gpus_per_node = 8;
  p.cluster.nodes = nodes;
  p.provenance.created = "2026-12-01T00:00:00Z";
  p.provenance.nccl_version = "2.28.9";
  p.env = {{"NCCL_IB_HCA", "=mlx5_0,mlx5_1"}};
  p.rules = std::move(rules);
  return p;
}

std::string merge_error(const Profile& a, const Profile& b) {
  try {
    merge_profiles({a, "a.toml"}, {b, "b.toml"});
  } catch (const autotune::InputError& e) {
    return e.what();
  }
  return "(merged)";
}

}  // namespace

TEST_CASE("merge: shapes calibrated apart join into one valid profile", "[merge]") {
  const Profile whole_node = calibration({rule(0, 1 << 20, 1, 8, Algorithm::nvls, Protocol::simple)}, 1);
  Profile per_node = calibration({rule(0, 1 << 20, 2, 1), rule(1 << 21, 1 << 30, 2, 1)}, 2);
  per_node.provenance.nccl_version = "2.28.3";    // another patch release of the same minor
  per_node.rules.push_back(whole_node.rules[0]);  // both calibrated 1x8 alike: held once
  const Profile merged = merge_profiles({whole_node, "a.toml"}, {per_node, "b.toml"});
  CHECK(merged.rules.size() == 3);
  CHECK(merged.cluster.nodes == 2);
  CHECK(merged.provenance.nccl_version == "2.28.9");
  CHECK_NOTHROW(validate_profile(merged, "merged.toml"));
  const Profile reread = parse_profile(format_profile(merged), "merged.toml");
  CHECK(reread.rules.size() == 3);
}

TEST_CASE("merge: the layouts of calibrations made apart join, so every kind keeps its name", "[merge]") {
  using autotune::nccl::Operation;
  Profile a = calibration({rule(0, 1 << 20, 1, 8, Algorithm::nvls, Protocol::simple)}, 1);
  Profile b = calibration({rule(0, 1 << 20, 2, 1)}, 2);
  const LayoutGroup tensor{"tp", 1, 8, 2, {Operation::allreduce}},
      data{"dp", 2, 2, 8, {Operation::allreduce}}, pipeline{"pp", 2, 2, 8, {Operation::sendrecv}};
  // One side without a layout: the other's, whichever it is.
  b.layout = JobLayout{"tp=8,pp=2", {tensor, pipeline}};
  CHECK(merge_profiles({a, "a.toml"}, {b, "b.toml"}).layout == b.layout);
  CHECK(merge_profiles({b, "b.toml"}, {a, "a.toml"}).layout == b.layout);
  // Both: the first's groups, then the second's it does not hold, the layouts named together.
  a.layout = JobLayout{"tp=8,dp=2", {tensor, data}};
  const Profile merged = merge_profiles({a, "a.toml"}, {b, "b.toml"});
  REQUIRE(merged.layout);
  CHECK(merged.layout->parallelism == "tp=8,dp=2 + tp=8,pp=2");
  CHECK(merged.layout->groups == std::vector<LayoutGroup>{tensor, data, pipeline});
  CHECK(parse_profile(format_profile(merged), "merged.toml").layout == merged.layout);
  CHECK(merge_profiles({a, "a.toml"}, {a, "a2.toml"}).layout == a.layout);
}

TEST_CASE("merge: a call both sides would decide differently is a conflict, named on both sides", "[merge]") {
  const Profile a = calibration({rule(0, 1 << 20, 2, 1)}, 2);
  Profile b = calibration({rule(1 << 19, 1 << 21, 2, 1, Algorithm::tree, Protocol::ll)}, 2);
  b.rules[0].source_line = 31;
  CHECK(merge_error(a, b) ==
        "b.toml:31: expected rules that do not overlap those of a.toml; found b.toml rule[1] at line 31 "
        "(allreduce 512K..2M, nodes 2, ranks 2, ranks_per_node 1: tree/ll) overlapping a.toml rule[1] "
        "(allreduce 0..1M, nodes 2, ranks 2, ranks_per_node 1: ring/ll128)");
  // The same bytes for another shape are no conflict.
  b.rules[0] = rule(1 << 19, 1 << 21, 2, 8, Algorithm::tree, Protocol::ll);
  CHECK(merge_error(a, b) == "(merged)");
}

TEST_CASE("merge: only calibrations made under the same conditions join", "[merge]") {
  const Profile a = calibration({rule(0, 1 << 20, 2, 1)}, 2);
  Profile b = calibration({rule(0, 1 << 20, 1, 8)}, 1);
  CHECK(merge_error(a, b) == "(merged)");

  Profile other_node = b;
  other_node.cluster.fingerprint = "00c0ffee00c0ffee";
  CHECK(merge_error(a, other_node)
            .find("found another kind of node (fingerprint d9ab18f09072d686 and "
                  "00c0ffee00c0ffee)") != std::string::npos);
  Profile other_nccl = b;
  other_nccl.provenance.nccl_version = "2.27.3";
  CHECK(merge_error(a, other_nccl).find("NCCL major.minor (2.28.9 and 2.27.3)") != std::string::npos);
  Profile simulated = b;
  simulated.provenance.source = Source::simulated;
  CHECK(merge_error(a, simulated).find("source (measured and simulated)") != std::string::npos);
  Profile other_env = b;
  other_env.env["NCCL_CROSS_NIC"] = "1";
  CHECK(merge_error(a, other_env) ==
        "b.toml: expected a profile of the same calibration conditions as a.toml; found another [env] "
        "NCCL_CROSS_NIC (unset and \"1\"): each side's rules were measured under its own");
}
