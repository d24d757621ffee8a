// `verify`: each rule measured again inside its range against NCCL's default, with the verdicts still wins /
// no longer wins / now loses, the runners per scale, the profile's [env], and the new version --write stores;
// end to end through the command on the simulator.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

#include "calibrate/verify.hpp"
#include "cli_test_support.hpp"
#include "common/input_error.hpp"
#include "common/input_file.hpp"
#include "profiles/profile_toml.hpp"
#include "profiles/upkeep_record.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace autotune;
using namespace autotune::search;
using namespace autotune::measure;
using namespace autotune::calibrate;
using autotune::nccl::Algorithm;
using autotune::nccl::Protocol;
using autotune::runners::Measurement;
using autotune::runners::Outcome;

using autotune::test::TempDir;

namespace {

// NCCL's default takes 100 us and runs ring/LL; each forced choice takes its factor of that, with a little
// deterministic noise, or fails as scripted.
class ScriptedRunner : public runners::Runner {
 public:
  explicit ScriptedRunner(runners::Scale scale) : scale_(scale) {}
  runners::RunnerInfo info() const override {
    return {"scripted", "simulated", scale_.ranks,     scale_.nodes, scale_.ranks / scale_.nodes,
            "GPU",      "2.29.1",    "scripted runner"};
  }
  std::vector<Measurement> run(std::span<const runners::MeasureRequest> batch) override {
    std::vector<Measurement> out;
    for (const auto& r : batch) {
      Measurement m;
      m.request = r;
      const runners::Candidate& c = r.candidate;
      double factor = 1.0;
      if (c.algorithm == Algorithm::ring && c.protocol == Protocol::ll128) factor = 0.8;
      if (c.algorithm == Algorithm::tree && c.protocol == Protocol::ll) factor = 0.995;
      if (c.algorithm == Algorithm::nvls) factor = 1.3;
      if (c.algorithm == Algorithm::ring && c.protocol == Protocol::simple) {
        m.outcome = Outcome::wrong_result, m.detail = "3 wrong elements";
      } else if (c.algorithm == Algorithm::tree && c.protocol == Protocol::simple) {
        m.outcome = Outcome::unsupported, m.detail = "NCCL marked it unusable";
      } else {
        for (int k = 0; k < r.repetitions; ++k)
          m.times_us.push_back(100.0 * factor * (1.0 + 0.01 * ((k % 5) - 2)));
        m.used_algorithm = c.algorithm.value_or(Algorithm::ring);
        m.used_protocol = c.protocol.value_or(Protocol::ll);
      }
      out.push_back(m);
      ++asked;
    }
    return out;
  }
  int asked = 0;

 private:
  runners::Scale scale_;
};

profiles::Rule rule(Algorithm a, Protocol p, uint64_t lo, uint64_t hi, int nodes = 1, int ranks = 8) {
  profiles::Rule r;
  r.collective = nccl::Collective::allreduce;
  r.min_bytes = lo;
  r.max_bytes = hi;
  r.algorithm = a;
  r.protocol = p;
  r.nodes = profiles::CountRange{nodes, nodes};
  r.ranks = profiles::CountRange{ranks, ranks};
  r.busbw_gbps = 11.0;
  r.default_busbw_gbps = 10.0;
  return r;
}

profiles::Profile profile_of(std::vector<profiles::Rule> rules) {
  profiles::Profile p;
  p.cluster.name = "c";
  p.cluster.nodes = 1;
  p.cluster.gpus_per_node = 8;
  p.provenance.created = "2026-11-30T04:37:15Z";
  p.provenance.nccl_version = "2.28.9";
  p.rules = std::move(rules);
  return p;
}

VerifyRunnerFactory scripted() {
  return [](const runners::Scale& s) -> std::unique_ptr<runners::Runner> {
    if (s.nodes != 1) return nullptr;
    return std::make_unique<ScriptedRunner>(s);
  };
}

int cli_status(const std::string& args) {
  int status = std::system((test::kBinary + " " + args).c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("verify: sizes inside each third of a rule's range, on the size granularity") {
  // 1 MiB .. 8 MiB: the centres of its thirds in log size are 2^20.5, 2^21.5, 2^22.5.
  auto s = verify_sizes(1 << 20, 8 << 20, 64, 3);
  REQUIRE(s.size() == 3);
  CHECK(s[0] == Approx(std::pow(2.0, 20.5)).epsilon(0.001));
  CHECK(s[1] == Approx(std::pow(2.0, 21.5)).epsilon(0.001));
  CHECK(s[2] == Approx(std::pow(2.0, 22.5)).epsilon(0.001));
  for (uint64_t b : s) CHECK(b % 64 == 0);
  // A range of one size is measured once; one without a multiple of the granularity at its sizes as is.
  CHECK(verify_sizes(4096, 4096, 64, 3) == std::vector<uint64_t>{4096});
  CHECK(verify_sizes(100, 110, 64, 3).size() >= 1);
  for (uint64_t b : verify_sizes(100, 110, 64, 3)) CHECK((b >= 100 && b <= 110));
}

TEST_CASE("verify: still wins, no longer wins and now loses, with the figures and the reasons") {
  auto p = profile_of({
      rule(Algorithm::ring, Protocol::ll128, 1 << 20, 4 << 20),           // 20% faster: still wins
      rule(Algorithm::tree, Protocol::ll, 8 << 20, 16 << 20),             // 0.5% faster: no longer wins
      rule(Algorithm::nvls, Protocol::simple, 32 << 20, 64 << 20),        // 30% slower: now loses
      rule(Algorithm::ring, Protocol::simple, 128 << 20, 256 << 20),      // wrong results now: loses
      rule(Algorithm::tree, Protocol::simple, 512 << 20, 1024ull << 20),  // NCCL refuses it: no longer wins
      rule(Algorithm::ring, Protocol::ll, 2048ull << 20, 4096ull << 20),  // what NCCL's default runs now
      rule(Algorithm::ring, Protocol::ll128, 1 << 10, 2 << 10, 2, 16),    // a scale nothing here measures
  });
  VerifyResult r = verify_profile(p, {}, scripted());
  REQUIRE(r.rules.size() == 7);
  CHECK(r.rules[0].verdict == Verdict::still_wins);
  CHECK(r.rules[0].now.gain == Approx(0.25).margin(0.01));
  CHECK(r.rules[0].calibrated == Approx(0.1));
  CHECK(r.rules[0].sizes.size() == 3);
  CHECK(r.rules[1].verdict == Verdict::no_longer_wins);
  CHECK_THAT(r.rules[1].detail, Catch::Contains("no gain past the threshold"));
  CHECK(r.rules[2].verdict == Verdict::now_loses);
  CHECK_THAT(r.rules[2].detail, Catch::Contains("slower than NCCL's default"));
  CHECK(r.rules[3].verdict == Verdict::now_loses);
  CHECK_THAT(r.rules[3].detail, Catch::Contains("wrong_result") && Catch::Contains("3 wrong elements"));
  CHECK(r.rules[4].verdict == Verdict::no_longer_wins);
  CHECK_THAT(r.rules[4].detail, Catch::Contains("NCCL no longer accepts"));
  CHECK(r.rules[5].verdict == Verdict::no_longer_wins);
  CHECK_THAT(r.rules[5].detail, Catch::Contains("NCCL's default now runs this choice itself"));
  CHECK(r.rules[6].verdict == Verdict::not_checked);
  CHECK_THAT(r.rules[6].detail, Catch::Contains("cannot measure"));
  CHECK(r.count(Verdict::now_loses) == 2);
  CHECK(r.runner == "scripted runner");
  // The new version keeps the rules that still win or were not checked.
  auto next = without_failed_rules(p, r);
  REQUIRE(next.rules.size() == 2);
  CHECK(next.rules[0].algorithm == Algorithm::ring);
  CHECK(next.rules[0].protocol == Protocol::ll128);
  CHECK(next.rules[1].nodes->min == 2);
}

TEST_CASE("verify: on GPUs each shape's rules are measured by a runner of that shape, under the [env]") {
  auto p = profile_of({rule(Algorithm::ring, Protocol::ll128, 1 << 20, 4 << 20),
                       rule(Algorithm::ring, Protocol::ll128, 1 << 20, 4 << 20, 2, 16)});
  p.env = {{"NCCL_CROSS_NIC", "1"}};
  VerifyTarget gpus;
  int made = 0;
  gpus.make_runner = [&](const RunnerOptions& o) -> std::unique_ptr<runners::Runner> {
    ++made;
    CHECK_FALSE(o.simulate);
    CHECK(o.process_env == p.env);  // the profile's [env], checked against this process's by the runner
    REQUIRE(o.shape);
    if (!(*o.shape == runners::Scale{1, 8})) throw std::runtime_error("this job has 1 node x 8 ranks");
    return std::make_unique<ScriptedRunner>(*o.shape);
  };
  VerifyResult r = verify_profile(p, {}, verify_runners(gpus, p));
  CHECK(made == 2);
  CHECK(r.rules[0].verdict == Verdict::still_wins);
  CHECK(r.rules[1].verdict == Verdict::not_checked);
  CHECK_THAT(r.rules[1].detail,
             Catch::Contains("cannot measure") && Catch::Contains("this job has 1 node x 8"));
  // The [env] must be this process's: set what is unset, refuse what is set otherwise.
  CHECK(environment_to_set(p, {}) == std::map<std::string, std::string>{{"NCCL_CROSS_NIC", "1"}});
  CHECK(environment_to_set(p, {{"NCCL_CROSS_NIC", "1"}}).empty());
  CHECK_THROWS_WITH(environment_to_set(p, {{"NCCL_CROSS_NIC", "0"}}),
                    Catch::Contains("NCCL_CROSS_NIC") && Catch::Contains("found '0'"));
}

TEST_CASE("verify: bad values are refused before anything is measured") {
  VerifyTarget t;
  VerifyOptions o;
  o.repetitions = 0;
  CHECK_THROWS_AS(check_verify_request(t, o), InputError);
  o.repetitions = 5;
  t.simulator.noise = 2.0;
  CHECK_THROWS_AS(check_verify_request(t, o), InputError);
  t.simulator.noise = 0.03;
  CHECK_NOTHROW(check_verify_request(t, o));
  t.simulate = true;  // without a node
  CHECK_THROWS_AS(verify_runners(t, profile_of({})), InputError);
}

TEST_CASE("verify --simulate: a fresh profile still wins, a rule that loses fails it, and --write drops it") {
  const TempDir tmp("cli");
  const fs::path dir = tmp.path();
  const std::string store = " --store " + dir.string();
  REQUIRE(cli_status("tune --simulate --example h100-8x --nodes 2 --collectives allreduce" + store +
                     " >/dev/null 2>&1") == 0);
  const fs::path file = test::only_file(dir, ".toml");
  REQUIRE(cli_status("verify --simulate --nodes 2" + store + " > " + (dir / "out").string() + " 2>&1") == 0);
  std::string out = read_file(dir / "out");
  INFO(out);
  CHECK(out.find("still wins") != std::string::npos);
  CHECK(out.find("now loses") == std::string::npos);
  // Hand the profile a rule that is slower than NCCL's default: ring/LL for 1 GiB allreduce.
  profiles::Profile p = profiles::read_profile(file);
  const size_t before = p.rules.size();
  p.rules.push_back(rule(Algorithm::ring, Protocol::ll, 1ull << 30, 2ull << 30, 2, 16));
  profiles::write_profile(file, p);
  CHECK(cli_status("verify --simulate --nodes 2 --format json" + store + " > " + (dir / "json").string() +
                   " 2>&1") == 1);
  CHECK_THAT(read_file(dir / "json"), Catch::Contains("\"now_loses\": 1"));
  CHECK(cli_status("verify " + file.string() + " --simulate --write" + store + " >/dev/null 2>&1") == 1);
  profiles::Profile next = profiles::read_profile(file);
  CHECK(next.rules.size() <= before);
  for (const auto& r : next.rules)
    CHECK_FALSE((r.algorithm == Algorithm::ring && r.protocol == Protocol::ll));
  CHECK(profiles::read_profile(file.string() + ".prev").rules.size() == before + 1);  // the old one kept
  CHECK_THAT(next.provenance.command, Catch::StartsWith("nccl-autotune verify"));
  fs::remove_all(dir);
}

TEST_CASE("verify: when none of the rules can be measured it fails, and --write writes nothing") {
  const TempDir tmp("verify-nothing");
  const fs::path dir = tmp.path();
  const std::string store = " --store " + dir.string();
  REQUIRE(cli_status("tune --simulate --example h100-8x --nodes 2 --collectives allreduce --max-bytes 1M" +
                     store + " >/dev/null 2>&1") == 0);
  const fs::path file = test::only_file(dir, ".toml");
  const std::string before = read_file(file);
  // Not simulated: this process is one node, and the rules are for 2 nodes (here, without a GPU, nothing
  // can be measured at all): every rule is "not checked".
  CHECK(cli_status("verify " + file.string() + " --write" + store + " > " + (dir / "out").string() +
                   " 2>&1") == 1);
  const std::string out = read_file(dir / "out");
  INFO(out);
  CHECK_THAT(out,
             Catch::Contains("not checked (0 measurements") &&
                 Catch::Contains("rules could be checked (0 measurements): this is not a pass; no version "
                                 "written"));
  CHECK(read_file(file) == before);
  CHECK_FALSE(fs::exists(file.string() + ".prev"));
  fs::remove_all(dir);
}

TEST_CASE(
    "verify records its outcome and versions in the store, and --if-changed measures only after a change") {
  const TempDir tmp("verify-upkeep");
  const fs::path dir = tmp.path();
  const std::string store = " --store " + dir.string();
  REQUIRE(cli_status("tune --simulate --example h100-8x --nodes 2 --collectives allreduce --max-bytes 1M" +
                     store + " >/dev/null 2>&1") == 0);
  const std::string cluster = profiles::read_profile(test::only_file(dir, ".toml")).cluster.name;
  const std::string out = " > " + (dir / "out").string() + " 2>&1";
  // Never verified: --if-changed measures, and the store records the outcome and this node's versions.
  REQUIRE(cli_status("verify --simulate --nodes 2 --if-changed" + store + out) == 0);
  CHECK_THAT(read_file(dir / "out"), Catch::Contains("still win"));
  auto record = profiles::read_upkeep_record(dir, "verify", cluster);
  REQUIRE(record);
  CHECK(record->result == "ok");
  CHECK(record->facts.count("nccl") == 1);
  CHECK(record->facts.count("driver") == 1);
  // Nothing changed since: nothing measured.
  REQUIRE(cli_status("verify --simulate --nodes 2 --if-changed" + store + out) == 0);
  CHECK_THAT(read_file(dir / "out"), Catch::StartsWith("verify: nothing to do: NCCL "));
  // Another driver at the last verify: measured again, and recorded with this node's.
  record->facts["driver"] = "1.0-before-the-upgrade";
  profiles::write_upkeep_record(dir, *record);
  REQUIRE(cli_status("verify --simulate --nodes 2 --if-changed" + store + out) == 0);
  CHECK_THAT(read_file(dir / "out"), Catch::Contains("still win"));
  CHECK(profiles::read_upkeep_record(dir, "verify", cluster)->facts.at("driver") != "1.0-before-the-upgrade");
}
