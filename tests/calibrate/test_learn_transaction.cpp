// learn as one transaction (calibrate/learn_transaction.hpp): killed at each of its steps, or at random
// moments, and rerun, the store ends as after one uninterrupted run (the same rules published once, each
// production record in the journal once, the telemetry moved once); a second learn at once is refused naming
// the first; a `learned` planted in telemetry/ stops it before anything is written.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <random>

#include "calibrate/learn_transaction.hpp"
#include "common/atomic_file.hpp"
#include "common/input_error.hpp"
#include "common/run_lock.hpp"
#include "profiles/compiled_rules.hpp"
#include "profiles/profile_toml.hpp"
#include "profiles/store.hpp"
#include "reliability/kill_loop.hpp"
#include "support/learn_fixtures.hpp"

using namespace autotune;
using namespace autotune::calibrate;
using namespace autotune::search;
using nccl::Algorithm;
using nccl::Protocol;
namespace fs = std::filesystem;

namespace {

// A store whose profile has one AllReduce rule (Ring/LL at 1 MiB on 2x8, NCCL's default at 100 GB/s at
// calibration), and two jobs' telemetry showing the rule three times slower than that: learn drops it.
struct LearnStore {
  test::TempDir dir{"learn-tx"};
  fs::path store = dir.path() / "store";
  fs::path profile;
  LearnRequest request;

  LearnStore() {
    profiles::Profile p;
    p.cluster.name = "c";
    p.provenance.created = "2026-06-01T12:00:00Z";
    p.provenance.nccl_version = "2.28.9";
    p.rules = {test::learn_rule()};
    profile = profiles::Store(store).save(p);
    const std::string digest = profiles::digest_text(profiles::profile_digest(read_file(profile)));
    fs::create_directories(store / "telemetry");
    for (const char* job : {"j1", "j2", "j3"}) {
      profiles::Telemetry t;
      t.digest = digest, t.cluster = "c", t.nccl_version = "2.28.9", t.job = job, t.rank = "0";
      t.rows = {test::learn_row(Algorithm::ring, Protocol::ll, 3 * test::kLearnDefaultUs, 200)};
      write_file_atomically(store / "telemetry" / profiles::telemetry_file_name(digest, job, "0"),
                            profiles::format_telemetry(t));
    }
    request.profile = profile;
    request.store = store;
    request.options.min_users = 1;  // the test's files all belong to this user
    request.command = "nccl-autotune learn (test)";
  }
};

std::vector<std::string> names(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file()) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// What a learn leaves: the rules published, the production records, where the telemetry is, the versions.
struct StoreState {
  size_t rules = 0, production_records = 0, versions = 0;
  std::vector<std::string> telemetry, learned;
  bool plan_left = false;
  bool operator==(const StoreState&) const = default;
};

}  // namespace

namespace Catch {
template <>
struct StringMaker<StoreState> {
  static std::string convert(const StoreState& o) {
    std::string t = "rules " + std::to_string(o.rules) + ", production records " +
                    std::to_string(o.production_records) + ", versions " + std::to_string(o.versions) +
                    ", telemetry [";
    for (const auto& n : o.telemetry) t += n + " ";
    t += "], learned [";
    for (const auto& n : o.learned) t += n + " ";
    return t + "], plan left " + (o.plan_left ? "yes" : "no");
  }
};
}  // namespace Catch

namespace {

StoreState outcome_of(const LearnStore& s) {
  StoreState o;
  o.rules = profiles::read_profile(s.profile).rules.size();
  const fs::path journal = profiles::Store::journal_beside(s.profile);
  if (fs::exists(journal))
    for (const auto& r : load_journal(journal).records) o.production_records += r.source == "production";
  for (const auto& n : names(s.store / "versions")) o.versions += n.ends_with(".toml");
  o.telemetry = names(s.store / "telemetry");
  o.learned = names(s.store / "telemetry" / "learned");
  o.plan_left = fs::exists(learn_transaction_path(s.store));
  return o;
}

// Runs learn in a child that kills itself with SIGKILL right after `step`; returns whether it died so.
bool killed_after(const LearnRequest& request, const std::string& step) {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    LearnRequest r = request;
    r.after_step = [&](std::string_view s) {
      if (s == step) ::raise(SIGKILL);
    };
    try {
      run_learn(r);
    } catch (...) {
    }
    ::_exit(3);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
  }
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

}  // namespace

TEST_CASE("learn transaction: one uninterrupted run drops the slow rule and retires the telemetry",
          "[learn]") {
  LearnStore s;
  const StoreState before = outcome_of(s);
  const LearnOutcome o = run_learn(s.request);
  REQUIRE(o.result.changes.size() == 1);
  CHECK_THAT(o.published, Catch::Contains("(digest "));
  const StoreState after = outcome_of(s);
  CHECK(after.rules == 0);
  CHECK(after.production_records == 1);  // the three jobs' rows pooled into one aggregate
  CHECK(after.versions == before.versions + 1);
  CHECK(after.telemetry.empty());
  CHECK(after.learned.size() == 3);
  CHECK_FALSE(after.plan_left);
  // Run again: nothing left to learn, nothing changes.
  run_learn(s.request);
  CHECK(outcome_of(s) == after);
}

TEST_CASE("learn transaction: killed after each step and rerun, the store is as after one run", "[learn]") {
  LearnStore reference;
  run_learn(reference.request);
  const StoreState expected = outcome_of(reference);
  for (const char* step : {"planned", "folded", "published", "retired"}) {
    INFO("killed after " << step);
    LearnStore s;
    REQUIRE(killed_after(s.request, step));
    CHECK(outcome_of(s).plan_left);
    const LearnOutcome rerun = run_learn(s.request);
    CHECK_THAT(rerun.finished_pending, Catch::Contains(std::string("interrupted after '") + step + "'"));
    CHECK(outcome_of(s) == expected);
  }
}

TEST_CASE("learn transaction: killed at random moments and rerun, the store is as after one run", "[learn]") {
  LearnStore reference;
  const auto t0 = std::chrono::steady_clock::now();
  run_learn(reference.request);
  const auto took =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
  const StoreState expected = outcome_of(reference);
  unsigned seed = 0;
  auto rng = reliability::kill_rng(seed);
  INFO("AUTOTUNE_KILL_SEED=" << seed);
  for (int round = 0; round < 12; ++round) {
    LearnStore s;
    const auto delay = std::chrono::microseconds(std::uniform_int_distribution<long>(0, took * 2 + 1)(rng));
    reliability::run_and_kill(
        [&] {
          run_learn(s.request);
          for (;;) ::pause();  // finished before the kill: wait for it
        },
        delay);
    run_learn(s.request);
    INFO("round " << round << ", killed after " << delay.count() << " us");
    CHECK(outcome_of(s) == expected);
  }
}

TEST_CASE("learn transaction: a second learn on the store is refused at once, naming the first", "[learn]") {
  LearnStore s;
  const RunLock first = RunLock::acquire(s.store / ".learn.lock", "learn in the store (the first)");
  CHECK_THROWS_WITH(run_learn(s.request), Catch::Contains("found learn in the store (the first) (host ") &&
                                              Catch::Contains("pid " + std::to_string(::getpid())));
  CHECK(outcome_of(s).telemetry.size() == 3);
}

TEST_CASE("learn transaction: a `learned` planted in telemetry/ stops it before anything is written",
          "[learn][trust]") {
  LearnStore s;
  fs::create_directories(s.dir.path() / "elsewhere");
  fs::create_directory_symlink(s.dir.path() / "elsewhere", s.store / "telemetry" / "learned");
  const StoreState before = outcome_of(s);
  CHECK_THROWS_WITH(run_learn(s.request), Catch::Contains("learned") && Catch::Contains("not a link"));
  CHECK(outcome_of(s) == before);
  CHECK(names(s.dir.path() / "elsewhere").empty());
  CHECK_FALSE(fs::exists(profiles::Store::journal_beside(s.profile)));
}
