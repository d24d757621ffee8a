// tune() as every process of an MPI job runs it, with ranks as threads that really exchange values
// (tests/support/thread_process_group.hpp) and the labelled simulator splitting its simulated ranks among
// them: what root alone sees (its journal) must still end every rank the same way, never in a hang.
#include <signal.h>
#include <sys/resource.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "calibrate/tune.hpp"
#include "search/journal.hpp"
#include "simulator/sim_cluster.hpp"
#include "simulator/sim_runner.hpp"
#include "support/thread_process_group.hpp"
#include "tests/simulator/test_topologies.hpp"

namespace fs = std::filesystem;
using namespace autotune;
using namespace autotune::search;
using namespace autotune::calibrate;

namespace {

TuneOptions two_rank_options(const fs::path& journal) {
  TuneOptions o;
  o.space.collectives = {nccl::Collective::allreduce};
  o.space.min_bytes = 8;
  o.space.max_bytes = 8 << 20;
  o.space.scales = {{2, 16}};
  o.space.settings = {{"default", {}}};
  o.strategy = "exhaustive";
  o.journal = journal;
  o.header.source = "simulated";
  o.header.cluster = "threads";
  return o;
}

RunnerFactory simulator_on(const runners::ProcessGroup& group) {
  return
      [&group](const runners::ProcessSetting&, const runners::Scale& s) -> std::unique_ptr<runners::Runner> {
        sim::SimModel model(sim::describe_cluster(test::h100_node(), s.nodes));
        return std::make_unique<sim::SimRunner>(std::move(model), 1, 0.03, group);
      };
}

// Files this process writes may grow to `bytes`; a write past it fails with EFBIG (a full disk, as far as
// the journal can tell). SIGXFSZ is ignored so that the write fails instead of the process dying.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &old_);
    old_handler_ = ::signal(SIGXFSZ, SIG_IGN);
    rlimit lim = old_;
    lim.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &lim);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_);
    ::signal(SIGXFSZ, old_handler_);
  }

 private:
  rlimit old_{};
  sighandler_t old_handler_;
};

}  // namespace

TEST_CASE("tune across processes: every rank derives the same profile the simulator gives one process") {
  const fs::path dir = fs::temp_directory_path() / ("autotune-tune-ranks-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<size_t> rules(2);
  auto errors = test::run_ranks(2, [&](int rank, const runners::ProcessGroup& group) {
    TuneOptions o = two_rank_options(dir / "j.jsonl");
    o.processes = &group;
    rules[rank] = tune(o, simulator_on(group)).profile.rules.size();
  });
  CHECK(errors == std::vector<std::string>(2, ""));
  runners::SingleProcess alone;
  auto one = tune(two_rank_options(dir / "one.jsonl"), simulator_on(alone));
  CHECK(rules[0] == one.profile.rules.size());
  CHECK(rules[1] == rules[0]);
  fs::remove_all(dir);
}

TEST_CASE("tune across processes: a journal write that fails on root stops every rank with its reason") {
  // The fault issue 12 found: rank 0 recorded the failed write as a failed job and moved on, the others
  // carried on measuring, and the job hung in MPI.
  const fs::path dir = fs::temp_directory_path() / ("autotune-tune-full-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path journal = dir / "j.jsonl";
  std::vector<std::string> errors;
  {
    FileSizeLimit limit(6000);  // the header and a few batches fit
    errors = test::run_ranks(2, [&](int, const runners::ProcessGroup& group) {
      TuneOptions o = two_rank_options(journal);
      o.processes = &group;
      tune(o, simulator_on(group));
    });
  }
  INFO(errors[0] << "\n" << errors[1]);
  for (const auto& e : errors) {
    CHECK_THAT(e, Catch::Contains("cannot write journal " + journal.string()) &&
                      Catch::Contains("File too large") && Catch::Contains("stopped on every process") &&
                      Catch::Contains("--resume"));
    CHECK_THAT(e, !Catch::Contains("waited for the others"));
  }
  // What was journaled before is kept and reads back (a torn last line is dropped by the reader).
  auto kept = load_journal(journal);
  CHECK(kept.header);
  CHECK(!kept.records.empty());
  CHECK(fs::file_size(journal) <= 6000);
  fs::remove_all(dir);
}
