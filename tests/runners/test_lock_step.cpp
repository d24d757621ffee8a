// Lock-step agreement across the processes of a job, with ranks as threads that really exchange values: a
// failure on one rank is every rank's, and no rank is left waiting in a collective. (Catch2's assertions are
// not thread-safe: the rank threads record, the test thread checks.)
#include <catch2/catch.hpp>

#include <atomic>
#include <stdexcept>
#include <string>

#include "runners/lock_step.hpp"
#include "support/thread_process_group.hpp"

using namespace autotune::runners;
using autotune::test::run_ranks;

TEST_CASE("steps that succeed everywhere run on every rank", "[lock_step]") {
  std::atomic<int> bodies{0}, fine{0};
  auto errors = run_ranks(3, [&](int, const ProcessGroup& group) {
    LockStep steps(group);
    bool all = true;
    for (int i = 0; i < 4; ++i) all = steps.step([&] { ++bodies; }) && all;
    if (all && steps.outcome() == Outcome::ok) ++fine;
  });
  CHECK(errors == std::vector<std::string>(3, ""));
  CHECK(bodies == 12);
  CHECK(fine == 3);
}

TEST_CASE("a candidate's failure on one rank is every rank's outcome, and later steps are skipped",
          "[lock_step]") {
  std::atomic<int> after{0};
  std::vector<Outcome> outcomes(2);
  std::vector<std::string> details(2);
  auto errors = run_ranks(2, [&](int rank, const ProcessGroup& group) {
    LockStep steps(group);
    steps.step([] {});
    steps.step([&] {
      if (rank == 1) throw StepFailure(Outcome::wrong_result, "rank 1: 3 wrong values");
    });
    steps.step([&] { ++after; });
    outcomes[rank] = steps.outcome();
    details[rank] = steps.detail();
  });
  CHECK(errors == std::vector<std::string>(2, ""));
  CHECK(outcomes == std::vector<Outcome>{Outcome::wrong_result, Outcome::wrong_result});
  CHECK(details[0] == "wrong_result on another rank");
  CHECK(details[1] == "rank 1: 3 wrong values");
  CHECK(after == 0);
}

TEST_CASE("the worst outcome wins when ranks fail differently", "[lock_step]") {
  std::vector<Outcome> outcomes(3);
  run_ranks(3, [&](int rank, const ProcessGroup& group) {
    LockStep steps(group);
    steps.step([&] {
      if (rank == 0) throw StepFailure(Outcome::unsupported, "no");
      if (rank == 2) throw StepFailure(Outcome::timed_out, "hung");
    });
    outcomes[rank] = steps.outcome();
  });
  CHECK(outcomes == std::vector<Outcome>(3, Outcome::timed_out));
}

TEST_CASE("an error that is not a candidate's outcome ends every rank's runner with its reason, no hang",
          "[lock_step]") {
  // The fault issue 12 found in the NCCL runner: a communicator that cannot be created threw past the
  // agreement on one rank while the others waited in MPI for ever.
  auto errors = run_ranks(3, [&](int rank, const ProcessGroup& group) {
    LockStep steps(group);
    steps.step([] {});
    steps.step([&] {
      if (rank == 1)
        throw std::runtime_error(
            "cannot create the NCCL communicator: ncclCommInitRank: unhandled system error");
    });
    throw std::logic_error("rank " + std::to_string(rank) + " went on after a broken step");
  });
  for (const auto& e : errors)
    CHECK(e == "rank 1: cannot create the NCCL communicator: ncclCommInitRank: unhandled system error");
}

TEST_CASE("alone, a broken step throws its own reason unchanged", "[lock_step]") {
  SingleProcess alone;
  LockStep steps(alone);
  CHECK_THROWS_WITH(steps.step([] { throw std::runtime_error("no CUDA device: none"); }),
                    "no CUDA device: none");
}

TEST_CASE("the thread process group itself reports a rank left waiting", "[lock_step]") {
  // What the agreement prevents: one rank skipping a collective the others make.
  auto errors = run_ranks(
      2,
      [&](int rank, const ProcessGroup& group) {
        if (rank == 0) group.barrier();
      },
      std::chrono::milliseconds(200));
  CHECK(errors[0].find("waited for the others") != std::string::npos);
  CHECK(errors[1].empty());
}
