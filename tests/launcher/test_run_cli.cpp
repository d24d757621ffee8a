// End to end: the real nccl-autotune binary runs a real child (launcher_print_env) through `run`, and `env`
// output is consumed by a real shell.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "child_process.hpp"
#include "common/input_file.hpp"
#include "launcher/default_services.hpp"
#include "launcher/fingerprint_cache.hpp"
#include "profiles/compiled_rules.hpp"
#include "profiles/profile_toml.hpp"
#include "support/skip.hpp"
#include "support/temp_dir.hpp"

using autotune::test::TempDir;

namespace fs = std::filesystem;
using autotune::profiles::Profile;
using autotune::profiles::Source;

namespace {

const std::string kCli = AUTOTUNE_CLI;
const std::string kPrintEnv = AUTOTUNE_PRINT_ENV;
const std::string kNodeFingerprint = "00c0ffee00c0ffee";

// The version the launcher pins a job to: the file's content, named by its digest.
std::string digest_of(const fs::path& file) {
  return autotune::profiles::digest_text(autotune::profiles::profile_digest(autotune::read_file(file)));
}

Profile make_profile(const std::string& cluster, const std::string& fingerprint,
                     Source source = Source::measured) {
  Profile p;
  p.cluster.name = cluster;
  p.cluster.fingerprint = fingerprint;
  p.provenance.created = "2026-11-30T00:00:00Z";
  p.provenance.tool_version = "0.1.0";
  p.provenance.nccl_version = "2.28.9";
  p.provenance.source = source;
  p.env = {{"NCCL_IB_HCA", "=mlx5_0,mlx5_1"}, {"NCCL_CROSS_NIC", "1"}};
  return p;
}

// A private world: store, fingerprint cache (warm, with a known fingerprint), plugin directory.
struct Setup {
  TempDir dir;
  fs::path store = dir.path() / "store";
  fs::path plugin_dir = dir.path() / "plugin";
  fs::path cache = dir.path() / "cache";
  fs::path profile;
  std::map<std::string, std::string> env;

  Setup() {
    fs::create_directories(store);
    fs::create_directories(plugin_dir);
    dir.write("plugin/libnccl-tuner-autotune.so", "");
    autotune::launcher::FingerprintCache(cache).put(autotune::launcher::fingerprint_cache_key(228),
                                                    kNodeFingerprint);
    profile = store / "alpha-nccl2.28.toml";
    autotune::profiles::write_profile(profile, make_profile("alpha", kNodeFingerprint));
    env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"},
           {"HOME", dir.path().string()},
           {"NCCL_AUTOTUNE_STORE", store.string()},
           {"NCCL_AUTOTUNE_CACHE_DIR", cache.string()},
           {"NCCL_AUTOTUNE_PLUGIN_DIR", plugin_dir.string()},
           // The job's NCCL, as a banner-only file of a known version: not whatever this machine has.
           {"NCCL_AUTOTUNE_NCCL_LIB", AUTOTUNE_BANNER_NCCL_2_28}};
  }
  fs::path plugin() const { return plugin_dir / "libnccl-tuner-autotune.so"; }
};

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::vector<std::string> nccl_lines(const std::string& text) {
  std::vector<std::string> out;
  for (auto& l : lines(text))
    if (l.rfind("NCCL_", 0) == 0) out.push_back(l);
  return out;
}

std::vector<std::string> run_args(std::vector<std::string> options, std::vector<std::string> command) {
  std::vector<std::string> a = {kCli, "run"};
  a.insert(a.end(), options.begin(), options.end());
  a.push_back("--");
  a.insert(a.end(), command.begin(), command.end());
  return a;
}

}  // namespace

TEST_CASE("run execs the command with the profile's environment, in the same process", "[run_cli]") {
  Setup s;
  ChildProcess child(run_args({"--profile", s.profile.string()}, {kPrintEnv, "7"}), s.env);
  CHECK(child.read_line() == "pid=" + std::to_string(child.pid()));
  ChildResult r = child.finish();
  CHECK(r.exit_status == 7);
  CHECK(r.err.empty());
  CHECK(nccl_lines(r.out) == std::vector<std::string>{
                                 "NCCL_AUTOTUNE_CACHE_DIR=" + s.cache.string(),
                                 "NCCL_AUTOTUNE_NCCL_LIB=" + std::string(AUTOTUNE_BANNER_NCCL_2_28),
                                 "NCCL_AUTOTUNE_PLUGIN_DIR=" + s.plugin_dir.string(),
                                 "NCCL_AUTOTUNE_PROFILE=" + s.profile.string(),
                                 "NCCL_AUTOTUNE_PROFILE_DIGEST=" + digest_of(s.profile),
                                 "NCCL_AUTOTUNE_STORE=" + s.store.string(),
                                 "NCCL_CROSS_NIC=1",
                                 "NCCL_IB_HCA==mlx5_0,mlx5_1",
                                 "NCCL_TUNER_PLUGIN=" + s.plugin().string(),
                             });
}

TEST_CASE("run finds the store profile matching this node's cached fingerprint", "[run_cli]") {
  Setup s;
  autotune::profiles::write_profile(s.store / "beta-nccl2.28.toml", make_profile("beta", "1111222233334444"));
  ChildResult r = run_child(run_args({}, {kPrintEnv}), s.env);
  CHECK(r.exit_status == 0);
  CHECK(r.err.empty());
  CHECK(r.out.find("NCCL_AUTOTUNE_PROFILE=" + s.profile.string() + "\n") != std::string::npos);

  r = run_child(run_args({"--cluster", "beta"}, {kPrintEnv}), s.env);
  CHECK(r.exit_status == 2 - 2);  // runs untuned: beta was calibrated for other nodes
  CHECK(r.err == "nccl-autotune run: profile " + (s.store / "beta-nccl2.28.toml").string() +
                     " was calibrated for nodes with fingerprint 1111222233334444, this node is " +
                     kNodeFingerprint + "; running the command untuned\n");
  CHECK(r.out.find("NCCL_TUNER_PLUGIN") == std::string::npos);
}

TEST_CASE("signals and exit statuses pass straight through", "[run_cli]") {
  Setup s;
  SECTION("a child killed by SIGTERM is seen by the shell as 143") {
    ChildProcess sh({"/bin/sh", "-c", "\"$0\" run --profile \"$1\" -- \"$2\" sleep; echo status=$?", kCli,
                     s.profile.string(), kPrintEnv},
                    s.env);
    std::string pid_line = sh.read_line();
    REQUIRE(pid_line.rfind("pid=", 0) == 0);
    pid_t job = std::stoi(pid_line.substr(4));
    // Exec, not fork: the job is the shell's direct child, with no launcher process left above it.
    std::string stat;
    std::ifstream(("/proc/" + std::to_string(job) + "/stat").c_str()) >> stat >> stat >> stat >> stat;
    CHECK(stat == std::to_string(sh.pid()));
    REQUIRE(::kill(job, SIGTERM) == 0);
    ChildResult r = sh.finish();
    CHECK(r.out.find("status=143\n") != std::string::npos);
  }
  SECTION("a signal to the launcher's pid reaches the job") {
    ChildProcess child(run_args({"--profile", s.profile.string()}, {kPrintEnv, "sleep"}), s.env);
    REQUIRE(child.read_line() == "pid=" + std::to_string(child.pid()));
    ::kill(child.pid(), SIGINT);
    CHECK(child.finish().exit_status == 128 + SIGINT);
  }
  SECTION("a command that does not exist is 127, one that cannot run 126") {
    ChildResult r = run_child(run_args({"--profile", s.profile.string()}, {"no-such-command-xyz"}), s.env);
    CHECK(r.exit_status == 127);
    CHECK(r.err == "nccl-autotune run: cannot run no-such-command-xyz: No such file or directory\n");
    fs::path not_exec = s.dir.write("data.txt", "x");
    r = run_child(run_args({"--profile", s.profile.string()}, {not_exec.string()}), s.env);
    CHECK(r.exit_status == 126);
  }
}

TEST_CASE("the user's variables win and are reported on one line, --override lets the profile win",
          "[run_cli]") {
  Setup s;
  auto env = s.env;
  env["NCCL_IB_HCA"] = "mlx5_9";
  ChildResult r = run_child(run_args({"--profile", s.profile.string()}, {kPrintEnv}), env);
  CHECK(r.exit_status == 0);
  CHECK(r.out.find("NCCL_IB_HCA=mlx5_9\n") != std::string::npos);
  CHECK(r.out.find("NCCL_CROSS_NIC=1\n") != std::string::npos);
  CHECK(r.err ==
        "nccl-autotune run: keeping your NCCL_IB_HCA=mlx5_9 (profile: =mlx5_0,mlx5_1); --override lets the "
        "profile win\n");
  r = run_child(run_args({"--override", "--profile", s.profile.string()}, {kPrintEnv}), env);
  CHECK(r.out.find("NCCL_IB_HCA==mlx5_0,mlx5_1\n") != std::string::npos);
  CHECK(r.err.find("overriding your NCCL_IB_HCA=mlx5_9") != std::string::npos);
}

TEST_CASE("NCCL_TUNER_PLUGIN=none turns the launcher off silently", "[run_cli]") {
  Setup s;
  auto env = s.env;
  env["NCCL_TUNER_PLUGIN"] = "none";
  ChildResult r = run_child(run_args({"--strict", "--profile", s.profile.string()}, {kPrintEnv}), env);
  CHECK(r.exit_status == 0);
  CHECK(r.err.empty());
  CHECK(r.out.find("NCCL_TUNER_PLUGIN=none\n") != std::string::npos);
  CHECK(r.out.find("NCCL_AUTOTUNE_PROFILE") == std::string::npos);
  CHECK(r.out.find("NCCL_IB_HCA") == std::string::npos);
}

TEST_CASE("every failure: one stderr line, the command untouched, or status 2 with --strict", "[run_cli]") {
  Setup s;
  struct Case {
    std::string what;
    std::vector<std::string> options;
    std::string message_start;
  };
  fs::path bad = s.dir.write("bad.toml", "schema = 1\n[cluster]\nname = \"\"\n");
  ::chmod(bad.c_str(), 0644);
  fs::path open_profile = s.dir.path() / "open.toml";
  autotune::profiles::write_profile(open_profile, make_profile("open", kNodeFingerprint));
  ::chmod(open_profile.c_str(), 0666);
  std::vector<Case> cases = {
      {"missing file",
       {"--profile", (s.dir.path() / "absent.toml").string()},
       "nccl-autotune run: profile " + (s.dir.path() / "absent.toml").string() +
           " (from --profile) does not exist"},
      {"unknown cluster",
       {"--cluster", "zeta"},
       "nccl-autotune run: no profile for cluster 'zeta' in " + s.store.string()},
      {"invalid profile",
       {"--profile", bad.string()},
       "nccl-autotune run: profile does not validate: " + bad.string() + ":"},
      {"untrusted profile",
       {"--profile", open_profile.string()},
       "nccl-autotune run: not using profile " + open_profile.string() + ": " + open_profile.string() +
           " is writable by everyone (mode 0666)"},
      {"empty store",
       {"--store", (s.dir.path() / "empty").string()},
       "nccl-autotune run: no profile in " + (s.dir.path() / "empty").string() +
           " matches this node (fingerprint " + kNodeFingerprint + ")"},
      {"no store",
       {"--store", (s.dir.path() / "nowhere").string()},
       "nccl-autotune run: profile store " + (s.dir.path() / "nowhere").string() + " does not exist"},
  };
  fs::create_directories(s.dir.path() / "empty");
  for (const Case& c : cases) {
    INFO(c.what);
    CAPTURE(c.options);
    ChildResult r = run_child(run_args(c.options, {kPrintEnv, "5"}), s.env);
    CHECK(r.exit_status == 5);
    CHECK(lines(r.err).size() == 1);
    CHECK(r.err.substr(0, c.message_start.size()) == c.message_start);
    CHECK(r.err.find("; running the command untuned\n") != std::string::npos);
    CHECK(r.out.find("NCCL_TUNER_PLUGIN") == std::string::npos);

    auto strict = c.options;
    strict.push_back("--strict");
    r = run_child(run_args(strict, {kPrintEnv, "5"}), s.env);
    CHECK(r.exit_status == 2);
    CHECK(r.out.empty());
    CHECK(lines(r.err).size() == 1);
    CHECK(r.err.find("(--strict: not running the command)") != std::string::npos);
  }
  SECTION("a missing plugin is an installation problem: status 1 with --strict") {
    auto env = s.env;
    env["NCCL_AUTOTUNE_PLUGIN_DIR"] = (s.dir.path() / "noplugin").string();
    ChildResult r = run_child(run_args({"--strict", "--profile", s.profile.string()}, {kPrintEnv}), env);
    CHECK(r.exit_status == 1);
    CHECK(r.err.find("tuner plugin libnccl-tuner-autotune.so not found") != std::string::npos);
  }
  SECTION("NCCL_AUTOTUNE_INSECURE=1 accepts an open profile") {
    auto env = s.env;
    env["NCCL_AUTOTUNE_INSECURE"] = "1";
    ChildResult r = run_child(run_args({"--strict", "--profile", open_profile.string()}, {kPrintEnv}), env);
    CHECK(r.exit_status == 0);
    CHECK(r.out.find("NCCL_AUTOTUNE_PROFILE=" + open_profile.string()) != std::string::npos);
  }
  SECTION("usage errors are status 2") {
    CHECK(run_child({kCli, "run", "--profile", s.profile.string()}, s.env).exit_status == 2);
    CHECK(run_child({kCli, "run", "--bogus", "--", kPrintEnv}, s.env).exit_status == 2);
    CHECK(run_child({kCli, "run", "--profile", "a", "--cluster", "b", "--", kPrintEnv}, s.env).exit_status ==
          2);
  }
}

TEST_CASE("a simulated profile is used only when named, and says so", "[run_cli]") {
  Setup s;
  fs::remove(s.profile);
  fs::path sim = s.store / "model-nccl2.28.toml";
  autotune::profiles::write_profile(sim, make_profile("model", kNodeFingerprint, Source::simulated));
  ChildResult r = run_child(run_args({}, {kPrintEnv}), s.env);
  CHECK(r.err.find("simulated and stand-in profiles are used only when named") != std::string::npos);
  CHECK(r.out.find("NCCL_TUNER_PLUGIN") == std::string::npos);
  r = run_child(run_args({"--cluster", "model"}, {kPrintEnv}), s.env);
  CHECK(r.err.find("nccl-autotune run: using SIMULATED profile " + sim.string()) == 0);
  CHECK(r.out.find("NCCL_AUTOTUNE_PROFILE=" + sim.string()) != std::string::npos);
}

TEST_CASE("under a launcher, rank 0 alone says which profile the job runs with, every rank gets it",
          "[run_cli]") {
  Setup s;
  fs::path sim = s.store / "model-nccl2.28.toml";
  autotune::profiles::write_profile(sim, make_profile("model", kNodeFingerprint, Source::simulated));
  for (const char* rank_variable : {"OMPI_COMM_WORLD_RANK", "SLURM_PROCID"}) {
    for (const char* rank : {"0", "1"}) {
      INFO(rank_variable << "=" << rank);
      auto env = s.env;
      env[rank_variable] = rank;
      ChildResult r = run_child(run_args({"--cluster", "model"}, {kPrintEnv}), env);
      CHECK(r.exit_status == 0);
      CHECK(r.out.find("NCCL_AUTOTUNE_PROFILE=" + sim.string()) != std::string::npos);
      CHECK((r.err.find("using SIMULATED profile") != std::string::npos) == (std::string(rank) == "0"));
    }
  }
}

TEST_CASE("run takes the profile for the NCCL on the job's library path, and refuses one for another",
          "[run_cli]") {
  Setup s;
  // The fingerprint holds the NCCL major.minor: this node under NCCL 2.27 is another fingerprint.
  Profile older = make_profile("alpha", "0ld0ld0ld0ld0ld0");
  older.provenance.nccl_version = "2.27.3";
  const fs::path older_file = s.store / "alpha-nccl2.27.toml";
  autotune::profiles::write_profile(older_file, older);
  autotune::launcher::FingerprintCache(s.cache).put(autotune::launcher::fingerprint_cache_key(227),
                                                    "0ld0ld0ld0ld0ld0");
  auto env = s.env;
  env.erase("NCCL_AUTOTUNE_NCCL_LIB");
  env["LD_LIBRARY_PATH"] = fs::path(AUTOTUNE_BANNER_NCCL_2_27).parent_path().string();
  ChildResult r = run_child(run_args({"--cluster", "alpha"}, {kPrintEnv}), env);
  CHECK(r.err.empty());
  CHECK(r.out.find("NCCL_AUTOTUNE_PROFILE=" + older_file.string() + "\n") != std::string::npos);

  r = run_child(run_args({"--strict", "--profile", s.profile.string()}, {kPrintEnv}), env);
  CHECK(r.exit_status == 2);
  CHECK(r.err.find("was made for NCCL 2.28.9, the job loads NCCL 2.27.3 (" +
                   std::string(AUTOTUNE_BANNER_NCCL_2_27) + ", found through LD_LIBRARY_PATH)") !=
        std::string::npos);
  CHECK(r.out.empty());
}

TEST_CASE("run --dry-run says what would be set and why, and runs nothing", "[run_cli]") {
  Setup s;
  auto env = s.env;
  env["NCCL_CROSS_NIC"] = "0";
  ChildResult r = run_child(run_args({"--dry-run"}, {kPrintEnv, "3"}), env);
  CHECK(r.exit_status == 0);
  CHECK(r.out ==
        "profile: " + s.profile.string() + " (from store fingerprint match)\n" + "source: measured\n" +
            "version: " + digest_of(s.profile) + "\n" + "store: " + s.store.string() + "\n" +
            "job's NCCL: 2.28.9 (" + AUTOTUNE_BANNER_NCCL_2_28 + ", found through NCCL_AUTOTUNE_NCCL_LIB)\n" +
            "node fingerprint: " + kNodeFingerprint + " (cached)\n" +
            "NCCL_CROSS_NIC='0'  # profile [env], your value kept (profile: '1')\n" +
            "NCCL_IB_HCA='=mlx5_0,mlx5_1'  # profile [env], set\n" + "NCCL_TUNER_PLUGIN='" +
            s.plugin().string() + "'  # tuner plugin, set\n" + "NCCL_AUTOTUNE_PROFILE='" +
            s.profile.string() + "'  # profile path, set\n" + "NCCL_AUTOTUNE_PROFILE_DIGEST='" +
            digest_of(s.profile) + "'  # profile digest, set\n" + "would run: '" + kPrintEnv + "' '3'\n");
  r = run_child({kCli, "run", "--dry-run", "--format", "json"}, env);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["tuned"] == true);
  CHECK(j["origin"] == "store fingerprint match");
  CHECK(j["digest"] == digest_of(s.profile));
  CHECK(j["pinned_by"].is_null());
  CHECK(j["job_nccl"]["version"] == "2.28.9");
  CHECK(j["variables"][0]["decision"] == "kept-user");
}

TEST_CASE("env: sh survives eval with spaces and quotes, slurm and json", "[env_cli]") {
  Setup s;
  fs::path odd_dir = s.dir.path() / "it's a \"dir\" $HOME";
  fs::create_directories(odd_dir);
  fs::path odd = odd_dir / "p.toml";
  autotune::profiles::write_profile(odd, make_profile("odd", kNodeFingerprint));
  ChildResult r = run_child(
      {"/bin/sh", "-c", "eval \"$(\"$0\" env --profile \"$1\")\" && \"$2\"", kCli, odd.string(), kPrintEnv},
      s.env);
  CHECK(r.exit_status == 0);
  CHECK(r.err.empty());
  CHECK(r.out.find("\nNCCL_AUTOTUNE_PROFILE=" + odd.string() + "\n") != std::string::npos);
  CHECK(r.out.find("\nNCCL_IB_HCA==mlx5_0,mlx5_1\n") != std::string::npos);
  CHECK(r.out.find("\nNCCL_TUNER_PLUGIN=" + s.plugin().string() + "\n") != std::string::npos);

  r = run_child({kCli, "env", "--format", "slurm", "--profile", odd.string()}, s.env);
  CHECK(r.out == "export NCCL_CROSS_NIC=1\nexport NCCL_IB_HCA==mlx5_0,mlx5_1\nexport NCCL_TUNER_PLUGIN=" +
                     s.plugin().string() + "\nexport NCCL_AUTOTUNE_PROFILE=" + odd.string() +
                     "\nexport NCCL_AUTOTUNE_PROFILE_DIGEST=" + digest_of(odd) + "\n");

  r = run_child({kCli, "env", "--format", "json"}, s.env);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["profile"] == s.profile.string());
  CHECK(j["fingerprint"] == kNodeFingerprint);
  CHECK(j["variables"].size() == 5);

  // Untuned: nothing to eval, one line on stderr, status 2 only with --strict.
  r = run_child({kCli, "env", "--cluster", "zeta"}, s.env);
  CHECK(r.exit_status == 0);
  CHECK(r.out.empty());
  CHECK(r.err == "nccl-autotune env: no profile for cluster 'zeta' in " + s.store.string() + "\n");
  CHECK(run_child({kCli, "env", "--strict", "--cluster", "zeta"}, s.env).exit_status == 2);
  CHECK(run_child({kCli, "env", "--format", "csh"}, s.env).exit_status == 2);
}

TEST_CASE("the plugin is found next to the binary in the build tree", "[run_cli]") {
  Setup s;
  const fs::path built = fs::path(AUTOTUNE_BINARY_DIR) / "plugins" / "libnccl-tuner-autotune.so";
  if (!fs::exists(built)) {
    AUTOTUNE_SKIP("plugin not built ("
                  << built << "): build target nccl-tuner-autotune to check the build-tree lookup");
  }
  auto env = s.env;
  env.erase("NCCL_AUTOTUNE_PLUGIN_DIR");
  ChildResult r = run_child(run_args({"--profile", s.profile.string()}, {kPrintEnv}), env);
  CHECK(r.out.find("NCCL_TUNER_PLUGIN=" + built.string() + "\n") != std::string::npos);
}

TEST_CASE("under mpirun -np 4 every rank gets the profile's environment", "[run_cli][mpi]") {
  Setup s;
  const char* candidates[] = {"/usr/bin/mpirun", "/usr/local/bin/mpirun"};
  std::string mpirun;
  for (const char* c : candidates)
    if (::access(c, X_OK) == 0) mpirun = c;
  if (mpirun.empty()) {
    AUTOTUNE_SKIP("mpirun not found: the MPI launch test cannot run");
  }
  auto env = s.env;
  env["OMPI_ALLOW_RUN_AS_ROOT"] = "1";
  env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1";
  ChildResult r =
      run_child({mpirun, "--oversubscribe", "-np", "4", "-x", "NCCL_AUTOTUNE_STORE", "-x",
                 "NCCL_AUTOTUNE_CACHE_DIR", "-x", "NCCL_AUTOTUNE_PLUGIN_DIR", kCli, "run", "--", kPrintEnv},
                env);
  INFO(r.err);
  REQUIRE(r.exit_status == 0);
  std::map<std::string, int> seen;
  std::set<std::string> ranks;
  for (const auto& l : lines(r.out)) {
    if (l.rfind("rank=", 0) == 0) ranks.insert(l);
    seen[l]++;
  }
  CHECK(ranks.size() == 4);
  CHECK(seen["NCCL_AUTOTUNE_PROFILE=" + s.profile.string()] == 4);
  CHECK(seen["NCCL_TUNER_PLUGIN=" + s.plugin().string()] == 4);
  CHECK(seen["NCCL_IB_HCA==mlx5_0,mlx5_1"] == 4);
  CHECK(seen["NCCL_CROSS_NIC=1"] == 4);
}

// Issue 14: the operator refused with "fingerprint mismatch" sees what lies behind the two hashes.
TEST_CASE("probe --explain-fingerprint: the facts for the job's NCCL, and what differs from a profile",
          "[probe_cli]") {
  Setup s;
  auto explain = [&](const std::string& nccl_lib, std::vector<std::string> more) {
    auto env = s.env;
    env["NCCL_AUTOTUNE_NCCL_LIB"] = nccl_lib;
    std::vector<std::string> a = {kCli,       "probe", "--example", "h100-8x", "--explain-fingerprint",
                                  "--format", "json"};
    a.insert(a.end(), more.begin(), more.end());
    return run_child(a, env);
  };
  const ChildResult r228 = explain(AUTOTUNE_BANNER_NCCL_2_28, {});
  const ChildResult r227 = explain(AUTOTUNE_BANNER_NCCL_2_27, {});
  REQUIRE(r228.exit_status == 0);
  const auto j228 = nlohmann::json::parse(r228.out), j227 = nlohmann::json::parse(r227.out);
  CHECK(j228["nccl_major_minor"] == "2.28");
  CHECK(j227["nccl_major_minor"] == "2.27");
  CHECK(j227["nccl_from"].get<std::string>().find(AUTOTUNE_BANNER_NCCL_2_27) != std::string::npos);
  CHECK(j228["facts"][0] == "nccl 2.28");
  CHECK(j228["fingerprint"] != j227["fingerprint"]);
  // The plain probe names the same fingerprint: both are made for the job's NCCL.
  auto env = s.env;
  const ChildResult plain = run_child({kCli, "probe", "--example", "h100-8x", "--format", "json"}, env);
  CHECK(nlohmann::json::parse(plain.out)["fingerprint"] == j228["fingerprint"]);

  // A profile calibrated on the two-NIC node, with its facts: another kind of node, exit 1, the NICs named.
  Profile other = make_profile("beta", "");
  other.cluster.fingerprint = "0123456789abcdef";
  other.cluster.fingerprint_facts = {"nccl 2.28", "nic 2x ConnectX-7 InfiniBand 400Gb/s"};
  const fs::path file = s.store / "beta-nccl2.28.toml";
  autotune::profiles::write_profile(file, other);
  const ChildResult against = explain(AUTOTUNE_BANNER_NCCL_2_28, {"--against", file.string()});
  CHECK(against.exit_status == 1);
  const auto a = nlohmann::json::parse(against.out)["against"];
  CHECK(a["matches"] == false);
  CHECK(a["differences"].dump().find("NICs: calibrated 2x ConnectX-7 InfiniBand 400Gb/s, this node 8x") !=
        std::string::npos);
  // Its own fingerprint: the same kind of node, exit 0.
  other.cluster.fingerprint = j228["fingerprint"].get<std::string>();
  autotune::profiles::write_profile(file, other);
  CHECK(explain(AUTOTUNE_BANNER_NCCL_2_28, {"--against", file.string()}).exit_status == 0);
}
