#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <set>

#include "common/input_error.hpp"
#include "common/input_file.hpp"
#include "launcher/job_pin.hpp"
#include "launcher/launch_plan.hpp"
#include "profiles/compiled_rules.hpp"
#include "profiles/store.hpp"
#include "support/temp_dir.hpp"
#include "tests/launcher/fake_environment.hpp"

using autotune::test::TempDir;

namespace fs = std::filesystem;
using namespace autotune::launcher;
using autotune::launcher::test::fake_environment;
using autotune::profiles::Profile;
using autotune::profiles::Source;

namespace {

// A store of profile files whose contents the fake reader supplies; records what the world was asked.
struct World {
  TempDir dir;
  fs::path store = dir.path() / "store";
  std::map<fs::path, Profile> profiles;
  std::string node_fp = "fp-node";
  int fingerprint_calls = 0;
  std::vector<std::string> node_facts;
  int facts_calls = 0;
  int fingerprinted_for = 0;
  JobNccl job{"/usr/lib/libnccl.so.2", autotune::nccl::Version{2, 28, 9}, "LD_LIBRARY_PATH"};
  bool plugin_present = true;

  World() { fs::create_directory(store); }

  fs::path add(const std::string& name, const std::string& fp, Source source = Source::measured,
               std::map<std::string, std::string> env = {{"NCCL_IB_HCA", "mlx5_0"}}) {
    fs::path p = dir.write("store/" + name + ".toml", "profile " + name);
    ::chmod(p.c_str(), 0644);
    Profile prof;
    prof.cluster.name = name;
    prof.cluster.fingerprint = fp;
    prof.provenance.source = source;
    prof.env = std::move(env);
    profiles[p] = prof;
    return p;
  }

  Services services() {
    Services s;
    s.read_profile = [this](const fs::path& p) -> Profile {
      auto it = profiles.find(p);
      if (it == profiles.end()) throw autotune::InputError(p.string(), 3, "rule[1].algorithm: expected ...");
      return it->second;
    };
    s.store_dir = [this](const std::optional<fs::path>& opt) { return opt ? *opt : store; };
    s.find_by_name = [this](const fs::path&, const std::string& n, int) -> std::optional<fs::path> {
      for (const auto& [p, prof] : profiles)
        if (prof.cluster.name == n) return p;
      return std::nullopt;
    };
    s.find_by_fingerprint = [this](const fs::path&, const std::string& fp) {
      std::vector<fs::path> out;
      for (const auto& [p, prof] : profiles)
        if (prof.cluster.fingerprint == fp) out.push_back(p);
      return out;
    };
    s.job_nccl = [this](const EnvLookup&) { return job; };
    s.built_nccl_major_minor = 228;
    s.node_fingerprint = [this](int nccl_major_minor) {
      ++fingerprint_calls;
      fingerprinted_for = nccl_major_minor;
      if (node_fp.empty()) throw std::runtime_error("hwloc failed");
      return FingerprintLookup{node_fp, true, ""};
    };
    s.node_fingerprint_facts = [this](int) {
      ++facts_calls;
      if (node_facts.empty()) throw std::runtime_error("hwloc failed");
      return node_facts;
    };
    s.plugin = [this]() -> fs::path {
      if (!plugin_present)
        throw std::runtime_error("tuner plugin libnccl-tuner-autotune.so not found (looked at /x)");
      return "/lib/libnccl-tuner-autotune.so";
    };
    return s;
  }
};

}  // namespace

TEST_CASE("resolution order: --profile, --cluster, NCCL_AUTOTUNE_PROFILE, fingerprint", "[launch_plan]") {
  World w;
  fs::path a = w.add("a", "fp-node");
  fs::path b = w.add("b", "fp-node");
  fs::path c = w.add("c", "fp-node");
  fs::path d = w.add("d", "fp-node");
  LaunchOptions o;
  o.profile = a;
  o.cluster = "b";
  auto plan = plan_launch(o, w.services(), fake_environment({{"NCCL_AUTOTUNE_PROFILE", c.string()}}));
  REQUIRE(plan.tuned());
  CHECK(plan.profile_path == a);
  CHECK(plan.origin == ProfileOrigin::option_profile);

  o.profile.reset();
  plan = plan_launch(o, w.services(), fake_environment({{"NCCL_AUTOTUNE_PROFILE", c.string()}}));
  CHECK(plan.profile_path == b);
  CHECK(plan.origin == ProfileOrigin::option_cluster);

  o.cluster.reset();
  plan = plan_launch(o, w.services(), fake_environment({{"NCCL_AUTOTUNE_PROFILE", c.string()}}));
  CHECK(plan.profile_path == c);
  CHECK(plan.origin == ProfileOrigin::env_variable);

  plan = plan_launch(o, w.services(), fake_environment());
  REQUIRE(plan.tuned());
  CHECK(plan.origin == ProfileOrigin::store_fingerprint);
  CHECK(plan.fingerprint == "fp-node");
  CHECK(plan.store == w.store);
  REQUIRE(plan.vars.size() == 4);
  CHECK(plan.vars[0].name == "NCCL_IB_HCA");
  CHECK(plan.vars[2].value() == plan.profile_path->string());
  CHECK(plan.vars[3].value() == plan.digest);
}

TEST_CASE("NCCL_TUNER_PLUGIN=none turns everything off without probing", "[launch_plan]") {
  World w;
  w.add("a", "fp-node");
  auto plan = plan_launch({}, w.services(), fake_environment({{"NCCL_TUNER_PLUGIN", "none"}}));
  CHECK(plan.problem == Problem::disabled);
  CHECK(plan.vars.empty());
  CHECK(plan.strict_exit_status() == 0);
  CHECK(w.fingerprint_calls == 0);
}

TEST_CASE("every failure is one sentence and a strict status", "[launch_plan]") {
  World w;
  SECTION("no store") {
    LaunchOptions o;
    o.store = w.dir.path() / "nowhere";
    auto plan = plan_launch(o, w.services(), fake_environment());
    CHECK(plan.problem == Problem::no_profile);
    CHECK(plan.problem_text == "profile store " + (w.dir.path() / "nowhere").string() + " does not exist");
    CHECK(plan.strict_exit_status() == 2);
  }
  SECTION("no match") {
    w.add("a", "fp-other");
    auto plan = plan_launch({}, w.services(), fake_environment());
    CHECK(plan.problem == Problem::no_profile);
    CHECK(plan.problem_text ==
          "no profile in " + w.store.string() + " matches this node (fingerprint fp-node)");
  }
  SECTION("unknown cluster") {
    LaunchOptions o;
    o.cluster = "zeta";
    auto plan = plan_launch(o, w.services(), fake_environment());
    CHECK(plan.problem_text == "no profile for cluster 'zeta' in " + w.store.string());
  }
  SECTION("missing file") {
    LaunchOptions o;
    o.profile = w.dir.path() / "absent.toml";
    auto plan = plan_launch(o, w.services(), fake_environment());
    CHECK(plan.problem == Problem::no_profile);
    CHECK(plan.problem_text == "profile " + o.profile->string() + " (from --profile) does not exist");
  }
  SECTION("fingerprint mismatch") {
    LaunchOptions o;
    o.profile = w.add("a", "fp-other");
    auto plan = plan_launch(o, w.services(), fake_environment());
    CHECK(plan.problem == Problem::fingerprint_mismatch);
    CHECK(plan.problem_text ==
          "profile " + o.profile->string() +
              " was calibrated for nodes with fingerprint fp-other, this node is fp-node");
    CHECK(plan.strict_exit_status() == 2);
    CHECK(w.facts_calls == 0);  // the profile kept no facts: nothing to compare, no second probe
  }
  SECTION("fingerprint mismatch: what differs, from the facts the profile kept") {
    LaunchOptions o;
    o.profile = w.add("a", "fp-other");
    w.profiles[*o.profile].cluster.fingerprint_facts = {"nccl 2.28", "gpu 8x NVIDIA H100 80GB HBM3 sm90",
                                                        "nic 8x ConnectX-7 InfiniBand 400Gb/s"};
    w.node_facts = {"nccl 2.28", "gpu 8x NVIDIA H200 sm90", "nic 8x ConnectX-7 InfiniBand 400Gb/s"};
    auto plan = plan_launch(o, w.services(), fake_environment());
    CHECK(plan.problem == Problem::fingerprint_mismatch);
    CHECK(plan.problem_text ==
          "profile " + o.profile->string() +
              " was calibrated for nodes with fingerprint fp-other, this node is fp-node; "
              "what differs: GPUs: calibrated 8x NVIDIA H100 80GB HBM3 sm90, this node 8x "
              "NVIDIA H200 sm90");
    w.node_facts.clear();  // this node cannot be probed a second time: the refusal stands, and says so
    plan = plan_launch(o, w.services(), fake_environment());
    CHECK(plan.problem_text.find("; what differs is unknown (hwloc failed)") != std::string::npos);
    w.node_fp = "fp-other";  // a matching node is never probed for its facts
    const int before = w.facts_calls;
    plan = plan_launch(o, w.services(), fake_environment());
    CHECK(plan.problem == Problem::none);
    CHECK(w.facts_calls == before);
  }
  SECTION("probe fails") {
    w.node_fp.clear();
    auto plan = plan_launch({}, w.services(), fake_environment());
    CHECK(plan.problem == Problem::no_fingerprint);
    CHECK(plan.problem_text == "cannot fingerprint this node: hwloc failed");
  }
  SECTION("invalid profile") {
    LaunchOptions o;
    o.profile = w.dir.write("bad.toml", "x");
    ::chmod(o.profile->c_str(), 0644);
    auto plan = plan_launch(o, w.services(), fake_environment());
    CHECK(plan.problem == Problem::invalid_profile);
    CHECK(plan.problem_text ==
          "profile does not validate: " + o.profile->string() + ":3: rule[1].algorithm: expected ...");
  }
  SECTION("untrusted profile, unless NCCL_AUTOTUNE_INSECURE=1") {
    LaunchOptions o;
    o.profile = w.add("a", "fp-node");
    ::chmod(o.profile->c_str(), 0666);
    auto plan = plan_launch(o, w.services(), fake_environment());
    CHECK(plan.problem == Problem::untrusted);
    CHECK(plan.problem_text.find("is writable by everyone (mode 0666)") != std::string::npos);
    CHECK(plan.problem_text.find("NCCL_AUTOTUNE_INSECURE=1") != std::string::npos);
    ::setenv("NCCL_AUTOTUNE_INSECURE", "1", 1);
    plan = plan_launch(o, w.services(), fake_environment());
    ::unsetenv("NCCL_AUTOTUNE_INSECURE");
    CHECK(plan.tuned());
  }
  SECTION("untrusted store") {
    w.add("a", "fp-node");
    ::chmod(w.store.c_str(), 0777);
    auto plan = plan_launch({}, w.services(), fake_environment());
    CHECK(plan.problem == Problem::untrusted);
    CHECK(plan.problem_text.find("not using profile store " + w.store.string()) == 0);
  }
  SECTION("no plugin") {
    w.plugin_present = false;
    w.add("a", "fp-node");
    auto plan = plan_launch({}, w.services(), fake_environment());
    CHECK(plan.problem == Problem::no_plugin);
    CHECK(plan.strict_exit_status() == 1);
  }
}

TEST_CASE("a simulated profile is used only when named, and says so", "[launch_plan]") {
  World w;
  fs::path sim = w.add("sim", "fp-node", Source::simulated);
  auto plan = plan_launch({}, w.services(), fake_environment());
  CHECK(plan.problem == Problem::no_profile);
  CHECK(plan.problem_text.find("simulated and stand-in profiles are used only when named") !=
        std::string::npos);

  LaunchOptions o;
  o.cluster = "sim";
  plan = plan_launch(o, w.services(), fake_environment());
  REQUIRE(plan.tuned());
  REQUIRE(plan.notes.size() == 1);
  CHECK(plan.notes[0].find("SIMULATED") != std::string::npos);

  // Named explicitly, its modelled node need not be this one.
  w.profiles[sim].cluster.fingerprint = "fp-model";
  o.cluster.reset();
  o.profile = sim;
  CHECK(plan_launch(o, w.services(), fake_environment()).tuned());
}

TEST_CASE("a stand-in profile, made on the stand-in NCCL, is never matched either", "[launch_plan]") {
  World w;
  fs::path standin = w.add("standin", "fp-node", Source::standin);
  auto plan = plan_launch({}, w.services(), fake_environment());
  CHECK(plan.problem == Problem::no_profile);
  CHECK(plan.problem_text.find("simulated and stand-in profiles are used only when named") !=
        std::string::npos);
  LaunchOptions o;
  o.profile = standin;
  plan = plan_launch(o, w.services(), fake_environment());
  REQUIRE(plan.tuned());
  REQUIRE(plan.notes.size() == 1);
  CHECK(plan.notes[0].find("using STAND-IN profile " + standin.string()) == 0);
  CHECK(plan.details.back() == "fingerprint not checked: a standin profile describes a modelled node");
}

TEST_CASE("the fingerprint is needed only to match or to check", "[launch_plan]") {
  World w;
  LaunchOptions o;
  o.profile = w.add("a", "");
  auto plan = plan_launch(o, w.services(), fake_environment());
  CHECK(plan.tuned());
  CHECK(w.fingerprint_calls == 0);
  CHECK(plan.details.at(0) == "fingerprint not checked: the profile records none");
}

namespace {

// What a rank of job 77, step 0 sees; the profile is named the way an outer launcher would not name it.
std::map<std::string, std::string> rank_of_job(std::string step = "0") {
  return {{"SLURM_JOB_ID", "77"}, {"SLURM_STEP_ID", std::move(step)}};
}

// The store's immutable copy of a file as it is now (Store::save does this on every save).
fs::path keep_version(World& w, const fs::path& file) {
  fs::path copy = autotune::profiles::Store::version_path(
      file, autotune::profiles::digest_text(autotune::profiles::profile_digest(autotune::read_file(file))));
  fs::create_directories(copy.parent_path());
  fs::copy_file(file, copy);
  ::chmod(copy.c_str(), 0644);
  w.profiles[copy] = w.profiles.at(file);
  return copy;
}

void rewrite(const fs::path& file, const std::string& text) {
  std::ofstream(file, std::ios::trunc) << text;
}

}  // namespace

TEST_CASE("every rank of a job gets the version its first rank resolved, though the store changes",
          "[launch_plan][pin]") {
  World w;
  fs::path a = w.add("a", "fp-node");
  fs::path kept = keep_version(w, a);
  LaunchPlan first = plan_launch({}, w.services(), fake_environment(rank_of_job()));
  REQUIRE(first.tuned());
  CHECK(first.pinned_by == "job 77.0");
  CHECK(first.profile_path == kept);  // the immutable copy, not the file a publish replaces
  CHECK(fs::exists(w.store / "jobs" / "77.0.pin"));

  rewrite(a, "profile a, calibrated again");
  keep_version(w, a);
  LaunchPlan later = plan_launch({}, w.services(), fake_environment(rank_of_job()));
  REQUIRE(later.tuned());
  CHECK(later.profile_path == kept);
  CHECK(later.digest == first.digest);
  CHECK(later.vars.back().name == "NCCL_AUTOTUNE_PROFILE_DIGEST");
  CHECK(later.vars.back().value() == first.digest);

  // The next step of the job is a new NCCL job: it takes the new version.
  LaunchPlan next_step = plan_launch({}, w.services(), fake_environment(rank_of_job("1")));
  REQUIRE(next_step.tuned());
  CHECK(next_step.digest != first.digest);
}

TEST_CASE("a rank that resolved another profile follows the job's pin", "[launch_plan][pin]") {
  World w;
  fs::path a = w.add("a", "fp-node");
  fs::path b = w.add("b", "fp-node");
  LaunchOptions o;
  o.profile = a;
  REQUIRE(plan_launch(o, w.services(), fake_environment(rank_of_job())).tuned());
  o.profile = b;
  LaunchPlan other = plan_launch(o, w.services(), fake_environment(rank_of_job()));
  REQUIRE(other.tuned());
  CHECK(other.profile_path == a);
  CHECK(other.profile->cluster.name == "a");
  bool said = false;
  for (const auto& d : other.details) said |= d.find("pinned to " + a.string()) != std::string::npos;
  CHECK(said);
}

TEST_CASE("a pinned version the store no longer holds stops tuning, with both sides named",
          "[launch_plan][pin]") {
  World w;
  fs::path a = w.add("a", "fp-node");
  LaunchPlan first = plan_launch({}, w.services(), fake_environment(rank_of_job()));
  REQUIRE(first.tuned());
  CHECK(first.profile_path == a);  // saved before the store kept versions: the file itself
  rewrite(a, "profile a, changed by hand");
  LaunchPlan later = plan_launch({}, w.services(), fake_environment(rank_of_job()));
  CHECK(later.problem == Problem::version_lost);
  CHECK(later.problem_text.find("version " + first.digest) != std::string::npos);
  CHECK(later.problem_text.find("pinned by job 77.0") != std::string::npos);
  CHECK(later.strict_exit_status() == 1);
  CHECK(later.vars.empty());
}

TEST_CASE("an inherited profile keeps the digest the outer launcher pinned", "[launch_plan][pin]") {
  World w;
  fs::path a = w.add("a", "fp-node");
  fs::path kept = keep_version(w, a);
  const std::string old = plan_launch({}, w.services(), fake_environment()).digest;
  rewrite(a, "profile a, newer");
  auto inherited =
      fake_environment({{"NCCL_AUTOTUNE_PROFILE", a.string()}, {"NCCL_AUTOTUNE_PROFILE_DIGEST", old}});
  LaunchPlan plan = plan_launch({}, w.services(), inherited);
  REQUIRE(plan.tuned());
  CHECK(plan.profile_path == kept);
  CHECK(plan.digest == old);
  // An explicit --profile is a new decision, not an inherited one.
  LaunchOptions o;
  o.profile = a;
  CHECK(plan_launch(o, w.services(), inherited).digest != old);
}

TEST_CASE("pins live where the job's nodes share them", "[launch_plan][pin]") {
  TempDir d;
  auto e = [&](std::map<std::string, std::string> vars) { return fake_environment(std::move(vars)); };
  CHECK(pin_directory(d.path(), e({{"NCCL_AUTOTUNE_PIN_DIR", "/shared/pins"}})) == "/shared/pins");
  CHECK(pin_directory(d.path(), e({{"HOME", "/home/u"}})) == d.path() / "jobs");
  CHECK(pin_directory("/no/such/store", e({{"HOME", "/home/u"}})) == "/home/u/.cache/nccl-autotune/jobs");
  CHECK(pin_directory("/no/such/store", e({{"XDG_CACHE_HOME", "/c"}, {"HOME", "/home/u"}})) ==
        "/c/nccl-autotune/jobs");
}

TEST_CASE("ranks racing to pin a job all end with one pin", "[launch_plan][pin]") {
  TempDir d;
  constexpr int kRanks = 8;
  std::vector<pid_t> children;
  for (int i = 0; i < kRanks; ++i) {
    pid_t pid = ::fork();
    if (pid == 0) {
      std::string note;
      JobPin mine{"/store/p" + std::to_string(i) + ".toml", std::string(15, '0') + std::to_string(i)};
      auto pin = pin_job(d.path(), "race", mine, &note);
      std::ofstream(d.path() / ("rank" + std::to_string(i)))
          << (pin ? pin->profile.string() : "none " + note);
      ::_exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) ::waitpid(pid, nullptr, 0);
  std::set<std::string> seen;
  for (int i = 0; i < kRanks; ++i) seen.insert(autotune::read_file(d.path() / ("rank" + std::to_string(i))));
  CHECK(seen.size() == 1);
  CHECK(seen.begin()->rfind("/store/p", 0) == 0);
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(d.path())) ++files;
  CHECK(files == kRanks + 1);  // no temporaries left behind
}

TEST_CASE("a pin this tool did not write is ignored, and said so", "[launch_plan][pin]") {
  TempDir d;
  d.write("77.0.pin", "garbage");
  std::string note;
  CHECK_FALSE(pin_job(d.path(), "77.0", {"/s/a.toml", "0123456789abcdef"}, &note));
  CHECK(note.find("not one this tool wrote") != std::string::npos);
}

TEST_CASE("the profile must be made for the NCCL the job loads, unless its policy allows another",
          "[launch_plan][nccl]") {
  World w;
  fs::path a = w.add("a", "fp-node");
  w.profiles[a].provenance.nccl_version = "2.27.3";
  LaunchOptions o;
  o.profile = a;
  LaunchPlan plan = plan_launch(o, w.services(), fake_environment());
  CHECK(plan.problem == Problem::other_nccl);
  CHECK(plan.problem_text ==
        "profile " + a.string() +
            " was made for NCCL 2.27.3, the job loads NCCL 2.28.9 (/usr/lib/libnccl.so.2, "
            "found through LD_LIBRARY_PATH): calibrate for it, or allow it with [policy] "
            "other_nccl = \"apply\" or NCCL_AUTOTUNE_OTHER_NCCL=apply");
  CHECK(plan.strict_exit_status() == 2);

  plan = plan_launch(o, w.services(), fake_environment({{"NCCL_AUTOTUNE_OTHER_NCCL", "apply"}}));
  REQUIRE(plan.tuned());
  REQUIRE(plan.notes.size() == 1);
  CHECK(plan.notes[0].find("made for NCCL 2.27.3 to a job running NCCL 2.28.9") != std::string::npos);

  w.profiles[a].apply_under_other_nccl = true;
  CHECK(plan_launch(o, w.services(), fake_environment()).tuned());

  w.profiles[a].apply_under_other_nccl = false;
  w.job.version = autotune::nccl::Version{2, 27, 1};  // another patch release: the same rules hold
  CHECK(plan_launch(o, w.services(), fake_environment()).tuned());
}

TEST_CASE("the fingerprint is made for the job's NCCL, and an unknown one is said", "[launch_plan][nccl]") {
  World w;
  w.add("a", "fp-node");
  w.job.version = autotune::nccl::Version{2, 27, 3};
  REQUIRE(plan_launch({}, w.services(), fake_environment()).tuned());
  CHECK(w.fingerprinted_for == 227);

  w.job = {std::nullopt, std::nullopt, "no libnccl.so.2 on LD_LIBRARY_PATH"};
  LaunchPlan plan = plan_launch({}, w.services(), fake_environment());
  REQUIRE(plan.tuned());
  CHECK(w.fingerprinted_for == 228);
  REQUIRE(plan.notes.size() == 1);
  CHECK(plan.notes[0] ==
        "the job's NCCL is not known (no libnccl.so.2 on LD_LIBRARY_PATH): assuming NCCL 2.28, which this "
        "tool was built with; NCCL_AUTOTUNE_NCCL_LIB names the library");
}
