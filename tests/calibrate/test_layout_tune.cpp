// tune --simulate with a mixture-of-experts layout, end to end: every kind of group is measured with the
// collectives it runs, all groups of a shape at once; the point-to-point operations (expert all-to-all,
// pipeline send/recv) are listed as not measured by tune yet, never silently dropped; the journal and the
// profile keep the layout.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "cli_test_support.hpp"
#include "common/input_file.hpp"
#include "profiles/profile_toml.hpp"
#include "search/journal.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace autotune;
using autotune::test::TempDir;

namespace {

// Runs the command with its output in `out`; the exit status.
int layout_cli(const std::string& args, const fs::path& out) {
  const int status = std::system((test::kBinary + " " + args + " >" + out.string() + " 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("layout tune: the 16-node MoE plan says per kind what is measured and what is not") {
  const TempDir tmp("moe-plan");
  const fs::path out = tmp.path() / "out";
  REQUIRE(layout_cli("tune --simulate --example h100-8x --nodes 16 --parallelism tp=2,ep=8,pp=2 --dry-run "
                     "--store " +
                         tmp.path().string(),
                     out) == 0);
  const std::string text = read_file(out);
  INFO(text);
  // The plan's table has one row per scale: the expert groups' 2x4 runs only all-to-all, so it is none yet.
  for (const char* scale : {"\n1x2 ", "\n2x1 ", "\n4x1 ", "\n8x4 "}) CHECK_THAT(text, Catch::Contains(scale));
  CHECK_THAT(text, !Catch::Contains("\n2x4 "));
  CHECK_THAT(text, Catch::Contains("note: tp (tensor parallel): 64 groups of 1x2, measured all at once: "
                                   "allreduce, allgather, reducescatter\n"));
  CHECK_THAT(text, Catch::Contains("note: dp (data parallel): 4 groups of 8x4, measured all at once: "
                                   "allreduce, reducescatter, allgather\n"));
  CHECK_THAT(text, Catch::Contains("note: ep (expert parallel): 16 groups of 2x4, nothing measured; alltoall "
                                   "not measured by tune yet"));
  CHECK_THAT(text,
             Catch::Contains("note: edp (expert data parallel): 32 groups of 4x1, measured all at once"));
  CHECK_THAT(text,
             Catch::Contains("note: pp (pipeline parallel): 64 groups of 2x1, nothing measured; sendrecv "
                             "not measured by tune yet"));
  CHECK_THAT(text, Catch::Contains("note: embedding (pipeline embedding): 64 groups of 2x1, measured all at "
                                   "once: allreduce\n"));
  for (const auto& e : fs::directory_iterator(tmp.path())) CHECK(e.path().extension() != ".jsonl");
}

TEST_CASE("layout tune: each kind measured with its collectives, the layout in the journal and the profile") {
  // 4 nodes x 8, TP 2, EP 4, PP 2, DP 8: tensor 1x2; data 2x4; expert 1x4 (all-to-all only: not measured);
  // expert data, pipeline and embedding all 2x1.
  const TempDir tmp("moe-tune");
  const fs::path out = tmp.path() / "out";
  REQUIRE(
      layout_cli("tune --simulate --example h100-8x --nodes 4 --parallelism tp=2,ep=4,pp=2 --max-bytes 64K "
                 "--strategy exhaustive --store " +
                     tmp.path().string(),
                 out) == 0);
  INFO(read_file(out));
  const auto journal = search::load_journal(test::only_file(tmp.path(), ".jsonl"));
  REQUIRE(journal.header);
  REQUIRE(journal.header->layout);
  CHECK(journal.header->layout->parallelism == "tp=2,ep=4,pp=2");
  CHECK(journal.header->layout->groups.size() == 6);
  std::map<runners::Scale, std::set<nccl::Collective>> measured;
  for (const auto& r : journal.records) measured[r.scale].insert(r.measurement.request.collective);
  using nccl::Collective;
  const std::set<Collective> grads = {Collective::allreduce, Collective::reducescatter,
                                      Collective::allgather};
  CHECK(measured ==
        std::map<runners::Scale, std::set<Collective>>{{{1, 2}, grads}, {{2, 8}, grads}, {{2, 2}, grads}});
  const auto profile = profiles::read_profile(test::only_file(tmp.path(), ".toml"));
  REQUIRE(profile.layout);
  CHECK(*profile.layout == *journal.header->layout);
  for (const auto& r : profile.rules) CHECK(grads.count(r.collective) == 1);
  CHECK_THAT(read_file(out), Catch::Contains("note: ep (expert parallel): 8 groups of 1x4, nothing measured; "
                                             "alltoall not measured by tune yet"));
}
