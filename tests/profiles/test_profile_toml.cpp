#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/input_error.hpp"
#include "common/input_file.hpp"
#include "profiles/profile_toml.hpp"
#include "support/temp_dir.hpp"

using autotune::test::TempDir;

using namespace autotune::profiles;
using namespace autotune::nccl;
using autotune::InputError;

namespace {

const char* kHeader = R"(# a test profile
schema = 1
[cluster]
name = "dgx-a"
fingerprint = "h100x8-ndr400x8"
gpu_model = "H100 80GB HBM3"
gpus_per_node = 8
nodes = 4
nics_per_node = 8
[provenance]
created = "2026-06-01T12:00:00Z"
tool_version = "0.1.0"
nccl_version = "2.28.9"
source = "measured"
command = "nccl-autotune tune"
)";

// Line 16 onward is whatever the test appends.
std::string with(const std::string& tail) {
  return std::string(kHeader) + tail;
}

std::string error_of(const std::string& text) {
  try {
    parse_profile(text, "profile.toml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

const char* kRule = R"(
[[rule]]
collective = "allreduce"
min_bytes = 0
max_bytes = "64K"
algorithm = "tree"
protocol = "ll"
)";

}  // namespace

TEST_CASE("profile toml: a full profile reads and writes back byte-stable", "[profile_toml]") {
  std::string text = with(R"(
[env]
NCCL_IB_HCA = "=mlx5_0:1,mlx5_1:1"
NCCL_CROSS_NIC = "1"
[policy]
uncalibrated = "nearest"
[constants]
base_latency.ring.simple = 8.4
hw_latency.net.tree.ll = 5
ll_max_bw.hopper.2 = 45.0
[[rule]]
collective = "allreduce"
min_bytes = "1M"
max_bytes = 8388607
algorithm = "ring"
protocol = "simple"
channels = 16
nodes = "2-8"
busbw_gbps = 180.5
default_busbw_gbps = 150.25
samples = 5
[[rule]]
collective = "AllReduce"
min_bytes = 0
max_bytes = "64K"
algorithm = "tree"
protocol = "LL"
[[rule]]
collective = "allgather"
min_bytes = 8
max_bytes = "1G"
algorithm = "pat"
protocol = "simple"
ranks = 32
nodes = "4+"
)");
  Profile p = parse_profile(text, "profile.toml");
  CHECK(p.cluster.name == "dgx-a");
  CHECK(p.cluster.gpus_per_node == 8);
  CHECK(p.provenance.source == Source::measured);
  CHECK(p.env.at("NCCL_CROSS_NIC") == "1");
  CHECK(p.uncalibrated == UncalibratedPolicy::nearest_scale);
  REQUIRE(p.constants.size() == 3);
  CHECK(p.constants[1].table == "hw_latency");
  CHECK(p.constants[1].index == std::vector<int>{2, 0, 0});
  CHECK(p.constants[2].index == std::vector<int>{2, 1});
  REQUIRE(p.rules.size() == 3);
  CHECK(p.rules[0].max_bytes == 8388607u);
  CHECK(p.rules[0].nodes == CountRange{2, 8});
  CHECK(p.rules[0].source_line == 26);
  CHECK(p.rules[2].nodes == CountRange{4, std::numeric_limits<int>::max()});
  CHECK(p.rules[2].ranks == CountRange{32, 32});

  std::string once = format_profile(p);
  Profile again = parse_profile(once, "again.toml");
  CHECK(format_profile(again) == once);
  // Sorted: allgather before allreduce, then scale (any first), then min_bytes.
  CHECK(once.find("collective = \"allgather\"") < once.find("collective = \"allreduce\""));
  CHECK(once.find("max_bytes = \"64K\"") < once.find("max_bytes = 8388607"));
  CHECK(once.find("nodes = \"4+\"") != std::string::npos);
  CHECK(once.find("hw_latency.net.tree.ll = 5.0") != std::string::npos);
}

TEST_CASE("profile toml: NCCL_MIN_NCHANNELS above NCCL_MAX_NCHANNELS is blamed on its own line",
          "[profile_toml]") {
  // The [env] table starts on line 16; whichever of the two keys comes first, the line is the minimum's.
  CHECK(error_of(with("[env]\nNCCL_MAX_NCHANNELS = \"8\"\nNCCL_MIN_NCHANNELS = \"16\"\n")) ==
        "profile.toml:18: env: NCCL_MIN_NCHANNELS: expected at most NCCL_MAX_NCHANNELS (8); found \"16\"");
  CHECK(error_of(with("[env]\nNCCL_MIN_NCHANNELS = \"16\"\nNCCL_MAX_NCHANNELS = \"8\"\n")) ==
        "profile.toml:17: env: NCCL_MIN_NCHANNELS: expected at most NCCL_MAX_NCHANNELS (8); found \"16\"");
  CHECK(error_of(with("[env]\nNCCL_MIN_NCHANNELS = \"4\"\nNCCL_MAX_NCHANNELS = \"8\"\n")) == "(no error)");
}

TEST_CASE("profile toml: a profile built in code round-trips", "[profile_toml]") {
  Profile p;
  p.cluster.name = "weird \"name\"\twith\\escapes";
  p.cluster.fingerprint_facts = {"gpu 8x NVIDIA H100 sm90", "nccl 2.28"};
  p.provenance.created = "2026-06-01T12:00:00.5+02:00";
  p.provenance.nccl_version = "2.28";
  p.provenance.source = Source::simulated;
  p.provenance.command = "nccl-autotune tune --simulate\nsecond line";
  p.constants.push_back({"per_ch_max_nvls_tree_bw", {3, 2}, 0.1 + 0.2, 0});
  Rule r;
  r.collective = Collective::broadcast;
  r.min_bytes = 1;
  r.max_bytes = UINT64_MAX;
  r.algorithm = Algorithm::ring;
  r.protocol = Protocol::ll128;
  r.busbw_gbps = 1.0 / 3.0;
  p.rules.push_back(r);
  std::string text = format_profile(p);
  Profile back = parse_profile(text, "x.toml");
  CHECK(back.cluster.name == p.cluster.name);
  CHECK(back.cluster.fingerprint_facts == p.cluster.fingerprint_facts);
  CHECK(back.provenance.command == p.provenance.command);
  CHECK(back.constants[0].value == p.constants[0].value);
  CHECK(back.rules[0].max_bytes == UINT64_MAX);
  CHECK(back.rules[0].busbw_gbps == r.busbw_gbps);
  CHECK(format_profile(back) == text);
}

TEST_CASE("profile toml: every source reads back as itself, the model's two say so", "[profile_toml]") {
  for (Source s : {Source::measured, Source::simulated, Source::imported, Source::standin}) {
    Profile p;
    p.cluster.name = "n";
    p.provenance.created = "2026-06-01T12:00:00Z";
    p.provenance.nccl_version = "2.28.9";
    p.provenance.source = s;
    const std::string text = format_profile(p);
    CHECK(text.find("source = \"" + std::string(name(s)) + "\"") != std::string::npos);
    CHECK(parse_profile(text, "x.toml").provenance.source == s);
  }
  CHECK(from_model(Source::standin));
  CHECK(from_model(Source::simulated));
  CHECK_FALSE(from_model(Source::measured));
  CHECK_FALSE(from_model(Source::imported));
  CHECK(model_label(Source::standin) == "STAND-IN");
}

TEST_CASE("profile toml: text from outside is written as ASCII escapes and reads back", "[profile_toml]") {
  // A non-ASCII path in the command line that made the profile, a GPU name, a byte that is not UTF-8: the
  // file must stay ASCII (parse_profile refuses anything else) and still say the same.
  Profile p;
  p.cluster.name = "n";
  p.cluster.gpu_model = "GPU \xe2\x84\xa2 \xf0\x9f\x9a\x80";  // U+2122, U+1F680
  p.provenance.created = "2026-06-01T12:00:00Z";
  p.provenance.nccl_version = "2.28.9";
  p.provenance.command = "nccl-autotune tune --store /home/j\xc3\xb6rg/store \xff";
  const std::string text = format_profile(p);
  CHECK(std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; }));
  CHECK(text.find("gpu_model = \"GPU \\u2122 \\U0001f680\"") != std::string::npos);
  const Profile back = parse_profile(text, "x.toml");
  CHECK(back.cluster.gpu_model == p.cluster.gpu_model);
  CHECK(back.provenance.command == "nccl-autotune tune --store /home/j\xc3\xb6rg/store \xef\xbf\xbd");
  CHECK(format_profile(back) == text);
}

TEST_CASE("profile toml: every validation error names file, line and key", "[profile_toml]") {
  CHECK(error_of("schema = 1\n[cluster\n") ==
        "profile.toml:2: TOML syntax: Error while parsing table header: expected ']', saw '\\n'");
  CHECK(error_of("schema = 2\n") ==
        "profile.toml:1: schema: written by a newer nccl-autotune: schema 2, this version reads 1");
  CHECK(error_of("[cluster]\nname = \"x\"\n") ==
        "profile.toml:1: schema: expected schema = 1 at the top of the file; found no such key");
  CHECK(error_of("schema = \"1\"\n") == "profile.toml:1: schema: expected an integer; found string \"1\"");
  CHECK(error_of("schema = 1\nextra = 3\n") ==
        "profile.toml:2: extra: expected one of schema, cluster, provenance, env, policy, online, layout, "
        "constants, "
        "rule; "
        "found an "
        "unknown key");
  CHECK(error_of("schema = 1\n") ==
        "profile.toml:1: cluster: expected a table [cluster]; found no such table");
  CHECK(error_of("schema = 1\n[cluster]\nfingerprint = \"f\"\n") ==
        "profile.toml:2: cluster.name: expected a string; found no such key (it is required)");
  CHECK(error_of("schema = 1\n[cluster]\nname = \"a\"\ngpus = 8\n") ==
        "profile.toml:4: cluster.gpus: expected one of name, fingerprint, fingerprint_facts, gpu_model, "
        "gpus_per_node, nodes, "
        "nics_per_node; found an unknown key");
  CHECK(error_of("schema = 1\n[cluster]\nname = \"a\"\nnodes = -1\n") ==
        "profile.toml:4: cluster.nodes: expected an integer 0..1000000; found -1");
  CHECK(error_of("schema = 1\n[cluster]\nname = \"\"\n[provenance]\n") ==
        "profile.toml:3: cluster.name: expected a non-empty cluster name; found \"\"");
  std::string h = kHeader;
  auto replace = [&](std::string from, std::string to) {
    std::string t = h;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  CHECK(error_of(replace("source = \"measured\"", "source = \"guessed\"")) ==
        "profile.toml:14: provenance.source: expected one of measured, simulated, imported, standin; found "
        "\"guessed\"");
  CHECK(error_of(replace("created = \"2026-06-01T12:00:00Z\"", "created = \"yesterday\"")) ==
        "profile.toml:11: provenance.created: expected an RFC 3339 time such as 2025-06-01T12:00:00Z; found "
        "\"yesterday\"");
  CHECK(error_of(replace("created = \"2026-06-01T12:00:00Z\"", "created = 2026-06-01T12:00:00Z")) ==
        "(no error)");
  CHECK(error_of(replace("nccl_version = \"2.28.9\"", "nccl_version = \"latest\"")) ==
        "profile.toml:13: provenance.nccl_version: expected a version such as 2.28.9; found \"latest\"");
  CHECK(error_of(replace("nccl_version = \"2.28.9\"\n", "")) ==
        "profile.toml:10: provenance.nccl_version: expected a string; found no such key (it is required)");

  // [env]
  CHECK(error_of(with("[env]\nLD_PRELOAD = \"/tmp/evil.so\"\n")) ==
        "profile.toml:17: env: LD_PRELOAD: expected an NCCL tuning variable; found a variable that loads "
        "code, which "
        "a profile may never set");
  CHECK(error_of(with("[env]\nNCCL_CROSS_NIC = 1\n")) ==
        "profile.toml:17: env.NCCL_CROSS_NIC: expected a string (NCCL reads text: \"1\"); found integer 1");
  CHECK(error_of(with("[env]\nNCCL_IB_HCA = \"mlx5_0;reboot\"\n")) ==
        "profile.toml:17: env: NCCL_IB_HCA: expected a device name (letters, digits, '_', '-', '.'); found "
        "\"mlx5_0;reboot\"");
  CHECK(error_of(with("[env]\nNCCL_ALGO = \"ring;tree\"\n")) ==
        "profile.toml:17: env: NCCL_ALGO: expected 'collective:' before entry 2 (only the first may omit "
        "it); found "
        "\"tree\"");
  // [policy]
  CHECK(error_of(with("[policy]\nuncalibrated = \"closest\"\n")) ==
        "profile.toml:17: policy.uncalibrated: expected \"nccl\" or \"nearest\"; found \"closest\"");
  CHECK(error_of(with("[policy]\nfallback = \"nccl\"\n")) ==
        "profile.toml:17: policy.fallback: expected one of uncalibrated, other_nccl; found an unknown key");
  // [constants]
  CHECK(error_of(with("[constants]\nbase_latency.ring.simple = 1e7\n")) ==
        "profile.toml:17: constants.base_latency.ring.simple: expected a finite number 0..1000000 us; found "
        "1e+07");
  CHECK(error_of(with("[constants]\nll_max_bw.hopper.2 = -1.0\n")) ==
        "profile.toml:17: constants.ll_max_bw.hopper.2: expected a finite number 0..100000 GB/s; found -1.0");
  CHECK(error_of(with("[constants]\nll_max_bw.hopper.2 = nan\n")) ==
        "profile.toml:17: constants.ll_max_bw.hopper.2: expected a finite number 0..100000 GB/s; found nan");
  CHECK(error_of(with("[constants]\nhw_latency.infiniband.ring.ll = 1.0\n")) ==
        "profile.toml:17: constants.hw_latency.infiniband: expected one of nvlink, pci, net; found "
        "\"infiniband\"");
  CHECK(error_of(with("[constants]\nll_max_bw.hopper.4 = 1.0\n")) ==
        "profile.toml:17: constants.ll_max_bw.hopper.4: expected one of 1, 2, 3; found \"4\"");
  CHECK(error_of(with("[constants]\nbase_latency.ring = 1.0\n")) ==
        "profile.toml:17: constants.base_latency.ring: expected 1 more index names (ll, ll128, simple); "
        "found float "
        "1.0");
  CHECK(error_of(with("[constants]\nbase_latency.ring.simple = \"fast\"\n")) ==
        "profile.toml:17: constants.base_latency.ring.simple: expected a number; found string \"fast\"");
  CHECK(error_of(with("[constants]\nmax_latency.ring.simple = 1.0\n")) ==
        "profile.toml:17: constants.max_latency: expected one of base_latency, hw_latency, ll_max_bw, "
        "per_ch_max_ring_ll128_bw, per_ch_max_tree_ll128_bw, per_ch_max_tree_bw, per_ch_max_nvls_tree_bw; "
        "found an "
        "unknown table");
}

TEST_CASE("profile toml: rule errors", "[profile_toml]") {
  auto rule_with = [](std::string from, std::string to) {
    std::string r = kRule;
    if (!from.empty()) r.replace(r.find(from), from.size(), to);
    return with(r);
  };
  // Rule lines: 17 [[rule]], 18 collective, 19 min_bytes, 20 max_bytes, 21 algorithm, 22 protocol.
  CHECK(error_of(rule_with("", "")) == "(no error)");
  CHECK(error_of(rule_with("\"tree\"", "\"rign\"")) ==
        "profile.toml:21: rule[1].algorithm: expected one of tree, ring, collnetdirect, collnetchain, nvls, "
        "nvlstree, "
        "pat; found \"rign\"");
  CHECK(error_of(rule_with("\"allreduce\"", "\"broadcast\"")) ==
        "profile.toml:21: rule[1].algorithm: expected one of ring (what NCCL allows for broadcast); found "
        "\"tree\"");
  CHECK(error_of(rule_with("\"allreduce\"", "\"allgather\"")) ==
        "profile.toml:21: rule[1].algorithm: expected one of ring, collnetdirect, nvls, pat (what NCCL "
        "allows for "
        "allgather); found \"tree\"");
  CHECK(error_of(rule_with("\"tree\"", "\"nvls\"")) ==
        "profile.toml:22: rule[1].protocol: expected simple (nvls takes Simple only); found \"ll\"");
  CHECK(error_of(rule_with("\"ll\"", "\"ll64\"")) ==
        "profile.toml:22: rule[1].protocol: expected one of ll, ll128, simple; found \"ll64\"");
  CHECK(error_of(rule_with("\"allreduce\"", "\"alltoall\"")) ==
        "profile.toml:18: rule[1].collective: expected one of broadcast, reduce, allgather, reducescatter, "
        "allreduce; found \"alltoall\"");
  CHECK(error_of(rule_with("min_bytes = 0", "min_bytes = \"1M\"")) ==
        "profile.toml:20: rule[1].max_bytes: expected at least min_bytes (1048576); found 65536");
  CHECK(error_of(rule_with("min_bytes = 0", "min_bytes = \"1Q\"")) ==
        "profile.toml:19: rule[1].min_bytes: expected a byte count or a size such as \"64K\", \"1M\", "
        "\"8G\"; found "
        "string \"1Q\"");
  CHECK(error_of(rule_with("min_bytes = 0", "min_bytes = -5")) ==
        "profile.toml:19: rule[1].min_bytes: expected a size >= 0; found -5");
  CHECK(error_of(rule_with("min_bytes = 0\n", "")) ==
        "profile.toml:17: rule[1].min_bytes: expected a value; found no such key (it is required)");
  CHECK(error_of(rule_with("protocol = \"ll\"", "protocol = \"ll\"\nchannels = 65")) ==
        "profile.toml:23: rule[1].channels: expected an integer 0..64 (0 = NCCL decides); found 65");
  CHECK(
      error_of(rule_with("protocol = \"ll\"", "protocol = \"ll\"\nchanels = 4")) ==
      "profile.toml:23: rule[1].chanels: expected one of collective, min_bytes, max_bytes, algorithm, "
      "protocol, "
      "channels, nodes, ranks, ranks_per_node, busbw_gbps, default_busbw_gbps, samples, pipe_ops, reg_buff, "
      "chunk_bytes, gain, gain_low, gain_high, confidence, sizes, default_samples, runner_up, "
      "runner_up_busbw_gbps, basis; found an unknown key");
  CHECK(error_of(rule_with("protocol = \"ll\"", "protocol = \"ll\"\nnodes = \"8-2\"")) ==
        "profile.toml:23: rule[1].nodes: expected a count >= 1 or a range such as \"2-8\" or \"16+\"; found "
        "string "
        "\"8-2\"");
  CHECK(error_of(rule_with("protocol = \"ll\"", "protocol = \"ll\"\nranks = 0")) ==
        "profile.toml:23: rule[1].ranks: expected a count >= 1 or a range such as \"2-8\" or \"16+\"; found "
        "integer 0");
  CHECK(error_of(rule_with("protocol = \"ll\"", "protocol = \"ll\"\nsamples = 0")) ==
        "profile.toml:23: rule[1].samples: expected an integer >= 1; found 0");
  CHECK(error_of(rule_with("protocol = \"ll\"", "protocol = \"ll\"\nbusbw_gbps = inf")) ==
        "profile.toml:23: rule[1].busbw_gbps: expected a finite number 0..100000 GB/s; found inf");
  CHECK(error_of(rule_with("protocol = \"ll\"", "protocol = \"ll\"\nbusbw_gbps = \"fast\"")) ==
        "profile.toml:23: rule[1].busbw_gbps: expected a number; found string \"fast\"");
  std::string top = with("");
  top.insert(top.find("[cluster]"), "rule = 3\n");
  CHECK(error_of(top) == "profile.toml:3: rule: expected [[rule]] tables; found integer 3");
}

TEST_CASE("profile toml: overlapping rules", "[profile_toml]") {
  std::string second = R"(
[[rule]]
collective = "allreduce"
min_bytes = "32K"
max_bytes = "1M"
algorithm = "ring"
protocol = "simple"
)";
  CHECK(error_of(with(std::string(kRule) + second)) ==
        "profile.toml:24: rule[2]: expected byte ranges that do not overlap for one collective and scale; "
        "found "
        "32K..1M, nodes any, ranks any overlapping rule[1] at line 17 (0..64K, nodes any, ranks any)");
  // The same bytes at disjoint scales, or for another collective, or touching edges, do not overlap.
  std::string at_scale = second;
  at_scale.insert(at_scale.find("protocol"), "nodes = \"2-4\"\n");
  std::string first_scaled = kRule;
  first_scaled.insert(first_scaled.find("protocol"), "nodes = 1\n");
  CHECK(error_of(with(first_scaled + at_scale)) == "(no error)");
  std::string other = second;
  other.replace(other.find("allreduce"), 9, "allgather");
  CHECK(error_of(with(std::string(kRule) + other)) == "(no error)");
  std::string touching = second;
  touching.replace(touching.find("\"32K\""), 5, "65537");
  CHECK(error_of(with(std::string(kRule) + touching)) == "(no error)");
  std::string edge = second;
  edge.replace(edge.find("\"32K\""), 5, "65536");
  CHECK(error_of(with(std::string(kRule) + edge)).find("rule[2]: expected byte ranges that do not overlap") !=
        std::string::npos);
  // Scale ranges that intersect (2-4 and 4+) overlap; "any" overlaps every scale.
  std::string late = at_scale;
  late.replace(late.find("\"2-4\""), 5, "\"4+\"");
  std::string mid = second;
  mid.insert(mid.find("protocol"), "nodes = \"2-4\"\n");
  CHECK(error_of(with(mid + late)).find("profile.toml:25: rule[2]:") == 0);
  CHECK(error_of(with(std::string(kRule) + at_scale)).find("rule[2]: expected byte ranges") !=
        std::string::npos);
}

TEST_CASE("profile toml: validate_profile and write_profile refuse bad profiles built in code",
          "[profile_toml]") {
  TempDir dir;
  Profile p = parse_profile(with(kRule), "p.toml");
  p.rules[0].algorithm = Algorithm::pat;
  p.rules[0].protocol = Protocol::simple;
  CHECK_THROWS_WITH(
      write_profile(dir.path() / "p.toml", p),
      (dir.path() / "p.toml").string() +
          ":17: rule[1].algorithm: expected one of tree, ring, collnetdirect, collnetchain, nvls, "
          "nvlstree (what NCCL allows for allreduce); found \"pat\"");
  CHECK_FALSE(std::filesystem::exists(dir.path() / "p.toml"));
  p.rules[0].algorithm = Algorithm::ring;
  p.env["NCCL_TUNER_PLUGIN"] = "x";
  CHECK_THROWS_AS(validate_profile(p, "p"), InputError);
  p.env.clear();
  write_profile(dir.path() / "p.toml", p);
  CHECK(format_profile(read_profile(dir.path() / "p.toml")) == format_profile(p));
  CHECK_THROWS_WITH(read_profile(dir.path() / "missing.toml"), Catch::Contains("missing.toml"));
}

TEST_CASE("profile toml: a writer killed before its rename leaves the old profile intact", "[profile_toml]") {
  TempDir dir;
  auto target = dir.path() / "cluster.toml";
  Profile old = parse_profile(with(kRule), "old.toml");
  write_profile(target, old);
  std::string before = autotune::read_file(target);

  Profile big = old;
  big.provenance.command.assign(16u << 20, 'x');  // 16 MiB: the write and fsync take far longer than a poll
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    try {
      write_profile(target, big);
    } catch (...) {
      _exit(3);
    }
    _exit(0);
  }
  // Kill once the temporary file exists: the rename comes only after 16 MiB written and flushed. A writer
  // that finished first (a fast disk, a slow poll) must have left the new profile whole instead.
  bool saw_temp = false;
  int status = 0;
  pid_t ended = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!saw_temp && (ended = waitpid(child, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    for (const auto& e : std::filesystem::directory_iterator(dir.path()))
      if (e.path().filename().string().find(".tmp.") != std::string::npos) saw_temp = true;
    if (!saw_temp) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (ended == 0) {
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
  }
  if (WIFEXITED(status)) {
    INFO("the writer finished before it was killed");
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(format_profile(read_profile(target)) == format_profile(big));
    return;
  }
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
  CHECK(autotune::read_file(target) == before);
  CHECK(format_profile(read_profile(target)) == format_profile(old));
}

TEST_CASE("profile toml: per-call conditions and a chunk size read, write back and overlap by condition",
          "[profile_toml]") {
  const std::string text = with(R"(
[[rule]]
collective = "allreduce"
min_bytes = 0
max_bytes = "64K"
algorithm = "tree"
protocol = "ll"
reg_buff = true

[[rule]]
collective = "allreduce"
min_bytes = 0
max_bytes = "64K"
algorithm = "ring"
protocol = "ll"
reg_buff = false
pipe_ops = "2-4"

[[rule]]
collective = "allreduce"
min_bytes = "1M"
max_bytes = "8M"
algorithm = "ring"
protocol = "simple"
chunk_bytes = "1M"
)");
  Profile p = parse_profile(text, "profile.toml");
  REQUIRE(p.rules.size() == 3);
  CHECK(p.rules[0].reg_buff == std::optional<bool>(true));
  CHECK(p.rules[1].pipe_ops == CountRange{2, 4});
  CHECK(p.rules[2].chunk_bytes == (1u << 20));
  const std::string written = format_profile(p);
  CHECK(written.find("reg_buff = true\n") != std::string::npos);
  CHECK(written.find("pipe_ops = \"2-4\"\n") != std::string::npos);
  CHECK(written.find("chunk_bytes = \"1M\"\n") != std::string::npos);
  CHECK(format_profile(parse_profile(written, "again.toml")) == written);

  // Same bytes, conditions that can both hold: an overlap; conditions that exclude each other: none.
  std::string overlap = text;
  overlap.replace(overlap.find("reg_buff = false"), 16, "reg_buff = true");
  CHECK(error_of(overlap).find("rule[2]: expected byte ranges that do not overlap for one collective and "
                               "scale; found 0..64K, nodes any, ranks any, pipe_ops 2-4, reg_buff true "
                               "overlapping rule[1] at line 17") != std::string::npos);
}

TEST_CASE(
    "profile toml: chunk_bytes is refused above what NCCL_BUFFSIZE allows, off the grain, or beside "
    "call conditions",
    "[profile_toml]") {
  auto chunk_rule = [](const std::string& extra, const std::string& env = "") {
    return with(env +
                "\n[[rule]]\ncollective = \"allreduce\"\nmin_bytes = \"1M\"\nmax_bytes = \"8M\"\n"
                "algorithm = \"ring\"\nprotocol = \"simple\"\n" +
                extra);
  };
  // Lines: 17 [[rule]] ... 22 protocol, 23 the extra key (one line more with an [env] table).
  CHECK(error_of(chunk_rule("chunk_bytes = \"2M\"\n")) == "(no error)");
  CHECK(error_of(chunk_rule("chunk_bytes = \"4M\"\n")) ==
        "profile.toml:23: rule[1].chunk_bytes: expected at most 2M for ring/simple allreduce (what "
        "NCCL_BUFFSIZE = 4194304 allows; NCCL clamps a larger chunk to it); found 4M: raise NCCL_BUFFSIZE or "
        "lower the chunk");
  CHECK(error_of(chunk_rule("chunk_bytes = \"4M\"\n", "[env]\nNCCL_BUFFSIZE = \"8388608\"\n")) ==
        "(no error)");
  CHECK(
      error_of(chunk_rule("chunk_bytes = 1000\n")) ==
      "profile.toml:23: rule[1].chunk_bytes: expected a multiple of 512 bytes (simple's grain: NCCL rounds a "
      "chunk down to it); found 1000");
  CHECK(error_of(chunk_rule("chunk_bytes = \"1M\"\npipe_ops = 2\n")) ==
        "profile.toml:23: rule[1].chunk_bytes: expected no pipe_ops or reg_buff beside a chunk size (NCCL's "
        "getChunkSize is not told them, so the plugin could not tell which rule to follow); found both");
  CHECK(error_of(chunk_rule("reg_buff = 1\n")) ==
        "profile.toml:23: rule[1].reg_buff: expected true or false (whether NCCL registered both buffers); "
        "found integer 1");
  CHECK(error_of(chunk_rule("pipe_ops = 0\n")) ==
        "profile.toml:23: rule[1].pipe_ops: expected a count >= 1 or a range such as \"2-8\" or \"16+\"; "
        "found integer 0");
}

TEST_CASE("profile toml: health: what the gate saw and the nodes left out read and write back",
          "[profile_toml][health]") {
  Profile p;
  p.cluster.name = "c";
  p.provenance.created = "2026-06-01T12:00:00Z";
  p.provenance.nccl_version = "2.28.9";
  p.provenance.health = "8 node(s) checked by check (simulated): 2 blocking, excluded (--exclude-unhealthy)";
  p.provenance.excluded_nodes = {"node 3: mlx5_1 nic_bandwidth_low", "node 5: GPU2 gpu_bandwidth_low"};
  p.provenance.health_findings = {"node 1 (h1): GPU0 clocks_throttled (warn): SM clock at 80%",
                                  "node 3 (h3): mlx5_1 nic_bandwidth_low (block): rail 1 at 50%"};
  p.env = {{"NCCL_IB_GID_INDEX", "3"}, {"NCCL_SOCKET_IFNAME", "=eth0"}};
  const std::string text = format_profile(p);
  CHECK(text.find("health_findings = [\n  \"node 1 (h1): GPU0 clocks_throttled (warn): SM clock at 80%\",\n  "
                  "\"node 3 (h3)") != std::string::npos);
  CHECK(
      text.find(
          "excluded_nodes = [\"node 3: mlx5_1 nic_bandwidth_low\", \"node 5: GPU2 gpu_bandwidth_low\"]\n") !=
      std::string::npos);
  const Profile back = parse_profile(text, "x.toml");
  CHECK(back.provenance.health == p.provenance.health);
  CHECK(back.provenance.excluded_nodes == p.provenance.excluded_nodes);
  CHECK(back.provenance.health_findings == p.provenance.health_findings);
  CHECK(back.env == p.env);
  CHECK(format_profile(back) == text);
  // Absent: nothing written (hand-written and imported profiles), nothing read.
  Profile plain = p;
  plain.provenance.health.clear();
  plain.provenance.excluded_nodes.clear();
  plain.provenance.health_findings.clear();
  CHECK(format_profile(plain).find("health") == std::string::npos);
  CHECK(error_of(std::string(kHeader) + "excluded_nodes = \"node 3\"\n") ==
        "profile.toml:16: provenance.excluded_nodes: expected an array of strings; found string \"node 3\"");
  CHECK(error_of(std::string(kHeader) + "excluded_nodes = [3]\n") ==
        "profile.toml:16: provenance.excluded_nodes: expected an array of strings; found integer 3");
  CHECK(error_of(std::string(kHeader) + "health_findings = [1]\n") ==
        "profile.toml:16: provenance.health_findings: expected an array of strings; found integer 1");
}

TEST_CASE("profile: at most 100,000 rules, refused before any is read", "[profile]") {
  std::string text = with("");
  text.reserve(text.size() + (kMaxRules + 1) * 80);
  for (size_t i = 0; i <= kMaxRules; ++i)
    text += "[[rule]]\ncollective = \"allreduce\"\nmin_bytes = " + std::to_string(2 * i) +
            "\nmax_bytes = " + std::to_string(2 * i + 1) + "\nalgorithm = \"ring\"\nprotocol = \"ll\"\n";
  // The rule that is one too many starts 6 lines per rule after the header's 15.
  CHECK(error_of(text) == "profile.toml:" + std::to_string(16 + 6 * kMaxRules) +
                              ": rule: expected at most 100000 rules; found 100001");
}

TEST_CASE("profile: a huge or control-character key is shown cut and escaped, on one line", "[profile]") {
  const std::string huge = error_of(with(std::string(10 << 20, 'k') + " = 1\n"));
  CHECK(huge.size() < 400);
  CHECK_THAT(huge, Catch::Contains(std::string(80, 'k') + "...: expected one of"));
  const std::string newline = error_of(with("\"a\\nb\\u0000c\" = 1\n"));
  CHECK(newline.find('\n') == std::string::npos);
  CHECK_THAT(newline, Catch::Contains("a\\x0ab\\x00c: expected one of"));
}

TEST_CASE("profile: created must be a real time, not merely shaped like one", "[profile]") {
  const std::string prefix = "profile.toml:11: provenance.created: expected an RFC 3339 time";
  auto created = [](const std::string& value) {
    std::string text = kHeader;
    text.replace(text.find("2026-06-01T12:00:00Z"), 20, value);
    return error_of(text);
  };
  CHECK_THAT(created("2026-13-45T99:99:99Z"), Catch::StartsWith(prefix));
  CHECK_THAT(created("2026-02-29T00:00:00Z"), Catch::StartsWith(prefix));
  CHECK_THAT(created("2026-04-31T00:00:00Z"), Catch::StartsWith(prefix));
  CHECK_THAT(created("2026-01-01T24:00:00Z"), Catch::StartsWith(prefix));
  CHECK_THAT(created("2026-01-01T00:00:00+24:00"), Catch::StartsWith(prefix));
  CHECK(created("2024-02-29T23:59:60Z") == "(no error)");
  CHECK(created("2026-12-31T00:00:00.5-05:30") == "(no error)");
}
