// tune --simulate with a mixture-of-experts layout, end to end: every kind of group is measured with the
// operations it runs, all groups of a shape at once; the point-to-point operations (expert all-to-all,
// pipeline send/recv) at NCCL's default at every size, journaled as what they are, no rule coming of them;
// the journal and the profile keep the layout.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "calibrate/p2p_candidates.hpp"
#include "cli_test_support.hpp"
#include "common/input_error.hpp"
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
  // The plan's table has one row per scale: the expert groups' 2x4 runs only all-to-all, a scale of its own.
  for (const char* scale : {"\n1x2 ", "\n2x1 ", "\n2x4 ", "\n4x1 ", "\n8x4 "})
    CHECK_THAT(text, Catch::Contains(scale));
  CHECK_THAT(text, Catch::Contains("note: tp (tensor parallel): 64 groups of 1x2, measured all at once: "
                                   "allreduce, allgather, reducescatter\n"));
  CHECK_THAT(text, Catch::Contains("note: dp (data parallel): 4 groups of 8x4, measured all at once: "
                                   "allreduce, reducescatter, allgather\n"));
  CHECK_THAT(text, Catch::Contains("note: ep (expert parallel): 16 groups of 2x4, measured all at once: "
                                   "alltoall (point-to-point, NCCL's default at every size under each "
                                   "process-wide setting; no per-call rule exists)\n"));
  CHECK_THAT(text,
             Catch::Contains("note: edp (expert data parallel): 32 groups of 4x1, measured all at once"));
  CHECK_THAT(text, Catch::Contains("note: pp (pipeline parallel): 64 groups of 2x1, measured all at once: "
                                   "sendrecv (point-to-point"));
  // The dry run counts them: the expert groups' shape is a scale of its own, planned under every job.
  CHECK_THAT(text, Catch::Contains("  alltoall at 2x4: NCCL's default at every size"));
  CHECK_THAT(text, Catch::Contains("  sendrecv at 2x1: NCCL's default at every size"));
  CHECK_THAT(text, !Catch::Contains("not measured by tune yet"));
  // The point-to-point settings are swept per layout, a job each.
  CHECK_THAT(text, Catch::Contains("    p2p:NCCL_P2P_NET_CHUNKSIZE=524288\n"));
  CHECK_THAT(text, Catch::Contains("    p2p:NCCL_NCHANNELS_PER_NET_PEER=4\n"));
  CHECK_THAT(text, Catch::Contains("    p2p:NCCL_PXN_DISABLE=1\n"));
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
  std::map<runners::Scale, std::set<nccl::Operation>> measured;
  for (const auto& r : journal.records) measured[r.scale].insert(r.measurement.request.operation());
  using nccl::Operation;
  const std::set<Operation> grads = {Operation::allreduce, Operation::reducescatter, Operation::allgather};
  std::set<Operation> stages = grads;
  stages.insert(Operation::sendrecv);
  // The expert groups' 1x4 runs all-to-all alone: a scale of its own.
  CHECK(measured == std::map<runners::Scale, std::set<Operation>>{
                        {{1, 2}, grads}, {{2, 8}, grads}, {{2, 2}, stages}, {{1, 4}, {Operation::alltoall}}});
  // NCCL's default only, at every size, under every job.
  std::set<uint64_t> alltoall_sizes;
  for (const auto& r : journal.records)
    if (r.measurement.request.operation() == Operation::alltoall) {
      CHECK(r.measurement.request.candidate.is_default());
      alltoall_sizes.insert(r.measurement.request.bytes);
    }
  CHECK(alltoall_sizes.size() == 14);
  const auto profile = profiles::read_profile(test::only_file(tmp.path(), ".toml"));
  REQUIRE(profile.layout);
  CHECK(profile.layout->parallelism == journal.header->layout->parallelism);
  CHECK(profile.layout->groups == journal.header->layout->groups);
  for (const auto& r : profile.rules) CHECK(grads.count(nccl::to_operation(r.collective)) == 1);
  const std::string text = read_file(out);
  CHECK_THAT(text,
             Catch::Contains("  ep (expert parallel), 8 groups of 1x4: alltoall at 14 sizes (8 B..64 KiB), "
                             "NCCL's default busbw "));
  CHECK_THAT(text, Catch::Contains("  pp (pipeline parallel), 16 groups of 2x1: sendrecv at 14 sizes"));
  CHECK_THAT(text, Catch::Contains("no per-call rule exists (point-to-point"));
}

TEST_CASE("layout tune: a point-to-point setting joins [env] only where it helps and slows no collective") {
  // In the simulator PXN costs its NVLink hop on small all-to-alls, so turning it off helps them; a 16 MiB
  // NCCL_BUFFSIZE lengthens the Simple protocol's pipeline fill, so beside PXN off it still helps the
  // all-to-all but slows the all-reduce. Exhaustive: the adaptive strategy skips the Simple candidates at
  // these sizes (far slower than NCCL's default below 64 KiB), and the judge compares only what both jobs
  // measured.
  const TempDir tmp("p2p-setting");
  const fs::path out = tmp.path() / "out";
  REQUIRE(
      layout_cli("tune --simulate --example h100-8x --nodes 4 --parallelism tp=2,ep=4,pp=2 --max-bytes 64K "
                 "--collectives allreduce --strategy exhaustive --p2p-env "
                 "NCCL_PXN_DISABLE=1,NCCL_PXN_DISABLE=1+NCCL_BUFFSIZE="
                 "16777216 --store " +
                     tmp.path().string(),
                 out) == 0);
  const std::string text = read_file(out);
  INFO(text);
  CHECK_THAT(text, Catch::Contains("point-to-point setting 'p2p:NCCL_PXN_DISABLE=1' may join [env]"));
  CHECK_THAT(text, Catch::Contains("point-to-point setting 'p2p:NCCL_BUFFSIZE=16777216+NCCL_PXN_DISABLE=1' "
                                   "left out of [env]: point-to-point +"));
  CHECK_THAT(text, Catch::Contains("but it slows allreduce"));
  const auto profile = profiles::read_profile(test::only_file(tmp.path(), ".toml"));
  CHECK(profile.env == std::map<std::string, std::string>{{"NCCL_PXN_DISABLE", "1"}});
  REQUIRE(profile.layout);
  CHECK(profile.layout->p2p_env == std::vector<std::string>{"NCCL_PXN_DISABLE"});
  // Each job's all-to-all is journaled as what it is; the one that helps and costs is never exported.
  const auto journal = search::load_journal(test::only_file(tmp.path(), ".jsonl"));
  std::set<std::string> alltoall_jobs;
  for (const auto& r : journal.records)
    if (r.measurement.request.operation() == nccl::Operation::alltoall) alltoall_jobs.insert(r.setting.id);
  for (const std::string job :
       {"default", "p2p:NCCL_PXN_DISABLE=1", "p2p:NCCL_BUFFSIZE=16777216+NCCL_PXN_DISABLE=1"})
    CHECK(alltoall_jobs.count(job) == 1);
  // Alone, the setting that slows the all-reduce leaves [env] empty.
  const fs::path alone = tmp.path() / "alone";
  fs::create_directories(alone);
  REQUIRE(
      layout_cli("tune --simulate --example h100-8x --nodes 4 --parallelism tp=2,ep=4,pp=2 --max-bytes 64K "
                 "--collectives allreduce --strategy exhaustive --p2p-env "
                 "NCCL_PXN_DISABLE=1+NCCL_BUFFSIZE=16777216 --store " +
                     alone.string(),
                 out) == 0);
  const auto costly = profiles::read_profile(test::only_file(alone, ".toml"));
  CHECK(costly.env.empty());
  REQUIRE(costly.layout);
  CHECK(costly.layout->p2p_env.empty());
}

TEST_CASE("layout tune: --p2p-env takes point-to-point settings only") {
  using calibrate::parse_p2p_env;
  CHECK(parse_p2p_env("none").empty());
  CHECK(parse_p2p_env("NCCL_P2P_NET_CHUNKSIZE=524288,NCCL_PXN_DISABLE=1+NCCL_IB_QPS_PER_CONNECTION=4") ==
        std::vector<calibrate::EnvSet>{{{"NCCL_P2P_NET_CHUNKSIZE", "524288"}},
                                       {{"NCCL_PXN_DISABLE", "1"}, {"NCCL_IB_QPS_PER_CONNECTION", "4"}}});
  CHECK_THROWS_WITH(parse_p2p_env("NCCL_IB_HCA=mlx5_0"),
                    Catch::Contains("--p2p-env: expected point-to-point"));
  CHECK_THROWS_WITH(parse_p2p_env("NCCL_PXN_DISABLE=2"), Catch::Contains("--p2p-env: "));
  CHECK_THROWS_WITH(parse_p2p_env("NCCL_PXN_DISABLE"), Catch::Contains("expected NAME=VALUE"));
  // A chunk NCCL would cut to NCCL_BUFFSIZE / 8.
  CHECK_THROWS_AS(parse_p2p_env("NCCL_P2P_NET_CHUNKSIZE=1048576"), InputError);
  CHECK_THROWS_WITH(parse_p2p_env("NCCL_PXN_DISABLE=1,NCCL_PXN_DISABLE=1"), Catch::Contains("given twice"));
}
