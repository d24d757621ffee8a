// [layout] in the profile: the parallel layout a calibration was given, written in a canonical form, read
// back the same, and validated like every other table (file, line, what was expected).
#include <catch2/catch.hpp>

#include <algorithm>

#include "common/input_error.hpp"
#include "profiles/profile_toml.hpp"

using namespace autotune;
using namespace autotune::profiles;
using nccl::Operation;

namespace {

Profile layout_profile() {
  Profile p;
  p.cluster.name = "moe";
  p.cluster.gpus_per_node = 8;
  p.cluster.nodes = 16;
  p.provenance.created = "2026-12-01T12:00:00Z";
  p.provenance.nccl_version = "2.28.9";
  p.provenance.source = Source::simulated;
  p.layout =
      JobLayout{"tp=2,ep=8,pp=2",
                {{"tp", 1, 2, 64, {Operation::allreduce, Operation::allgather, Operation::reducescatter}},
                 {"ep", 2, 8, 16, {Operation::alltoall}},
                 {"pp", 2, 2, 64, {Operation::sendrecv}}}};
  return p;
}

std::string layout_error(const std::string& layout) {
  Profile p = layout_profile();
  p.layout.reset();
  try {
    parse_profile(format_profile(p) + layout, "p.toml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("layout profile: [layout] and its groups written and read back the same") {
  const Profile p = layout_profile();
  const std::string text = format_profile(p);
  CHECK(
      text.find("[layout]\nparallelism = \"tp=2,ep=8,pp=2\"\n\n[[layout.group]]\nkind = \"tp\"\nnodes = 1\n"
                "ranks = 2\ngroups = 64\noperations = [\"allreduce\", \"allgather\", \"reducescatter\"]\n") !=
      std::string::npos);
  const Profile back = parse_profile(text, "p.toml");
  REQUIRE(back.layout);
  CHECK(*back.layout == *p.layout);
  CHECK(format_profile(back) == text);
  Profile none = layout_profile();
  none.layout.reset();
  CHECK(format_profile(none).find("[layout]") == std::string::npos);
  CHECK_FALSE(parse_profile(format_profile(none), "p.toml").layout);
}

TEST_CASE("layout profile: groups of the shape a communicator has, named for people") {
  const JobLayout l = *layout_profile().layout;
  const auto pp = groups_of_shape(l, 2, 2);
  REQUIRE(pp.size() == 1);
  CHECK(describe_group(pp[0]) == "pipeline parallel, 64 groups");
  CHECK(groups_of_shape(l, 4, 4).empty());
  CHECK(operations_text(l.groups[0].operations) == "allreduce+allgather+reducescatter");
}

TEST_CASE("layout profile: a bad [layout] is refused naming its line and what was expected") {
  const std::string group = "\n[[layout.group]]\nkind = \"ep\"\nnodes = 2\nranks = 8\ngroups = 16\n";
  const std::string head = "\n[layout]\nparallelism = \"ep=8\"\n";
  CHECK_THAT(layout_error(head + group + "operations = [\"alltoall\"]\n"), Catch::Equals("(no error)"));
  CHECK_THAT(layout_error(head + group + "operations = [\"alltoal\"]\n"),
             Catch::Contains("layout.group[1].operations: expected operations such as allreduce or alltoall; "
                             "found \"alltoal\""));
  CHECK_THAT(layout_error(head + group + "operations = []\n"),
             Catch::Contains("layout.group[1]: expected at least one operation; found none"));
  CHECK_THAT(layout_error(head + group + "operations = [\"alltoall\", \"alltoall\"]\n"),
             Catch::Contains("expected each operation once; found alltoall twice"));
  std::string bad_kind = group;
  bad_kind.replace(bad_kind.find("\"ep\""), 4, "\"xp\"");
  CHECK_THAT(layout_error(head + bad_kind + "operations = [\"alltoall\"]\n"),
             Catch::Contains("layout.group[1]: expected a group kind (tp, cp, dp, ep, edp, pp"));
  std::string uneven = group;
  uneven.replace(uneven.find("ranks = 8"), 9, "ranks = 7");
  CHECK_THAT(layout_error(head + uneven + "operations = [\"alltoall\"]\n"),
             Catch::Contains("a multiple of nodes; found nodes 2, ranks 7"));
  CHECK_THAT(
      layout_error(head + group + "operations = [\"alltoall\"]\nshape = 1\n"),
      Catch::Contains("layout.group[1].shape: expected one of kind, nodes, ranks, groups, operations"));
  CHECK_THAT(layout_error("\n[layout]\n" + group + "operations = [\"alltoall\"]\n"),
             Catch::Contains("layout.parallelism: expected a string; found no such key"));
  CHECK_THAT(layout_error(head),
             Catch::Contains("layout.group: expected [[layout.group]] tables; found none"));
  // The line: the group's table header.
  Profile p = layout_profile();
  p.layout.reset();
  const std::string before = format_profile(p) + head + "\n";
  const auto line = std::count(before.begin(), before.end(), '\n') + 1;
  CHECK_THAT(
      layout_error(head + group + "operations = []\n"),
      Catch::StartsWith("p.toml:" + std::to_string(line) + ": layout.group[1]: expected at least one"));
}
