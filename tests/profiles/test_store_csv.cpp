#include <stdlib.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "common/atomic_file.hpp"
#include "common/input_error.hpp"
#include "common/input_file.hpp"
#include "profiles/compiled_rules.hpp"
#include "profiles/nccl_csv.hpp"
#include "profiles/profile_toml.hpp"
#include "profiles/store.hpp"
#include "support/temp_dir.hpp"

using autotune::test::TempDir;

using namespace autotune::profiles;
using namespace autotune::nccl;
namespace fs = std::filesystem;
using autotune::InputError;

namespace {

Profile make_profile(const std::string& cluster, const std::string& fingerprint, const std::string& nccl) {
  Profile p;
  p.cluster.name = cluster;
  p.cluster.fingerprint = fingerprint;
  p.provenance.created = "2026-06-01T12:00:00Z";
  p.provenance.nccl_version = nccl;
  Rule r;
  r.min_bytes = 0;
  r.max_bytes = 1023;
  r.algorithm = Algorithm::tree;
  r.protocol = Protocol::ll;
  p.rules.push_back(r);
  return p;
}

std::string csv_error(const std::string& text) {
  try {
    parse_nccl_csv(text, "t.csv");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("store: save, list, find, temp and .prev files skipped, bad files reported", "[store]") {
  TempDir dir;
  Store store(dir.path() / "store");
  CHECK(store.list().empty());  // a missing directory is an empty store

  Profile a = make_profile("dgx-a.1", "fp-h100", "2.28.9");
  auto path = store.save(a);
  CHECK(path == dir.path() / "store" / "dgx-a.1-nccl2.28.toml");
  // Names that cannot be their own file are refused before anything is written ("a/b" and "a_b" would share).
  CHECK_THROWS_AS(store.save(make_profile("dgx a/1", "fp-h100", "2.28.9")), autotune::InputError);
  CHECK_THROWS_AS(store.path_for(make_profile("..hidden", "", "2.30")), autotune::InputError);
  store.save(make_profile("dgx-a.1", "fp-h100", "2.30.1"));
  store.save(make_profile("other", "fp-a100", "2.28.9"));

  // Saving again keeps the previous version.
  Profile a2 = a;
  a2.rules[0].protocol = Protocol::simple;
  store.save(a2);
  auto prev = path;
  prev += ".prev";
  REQUIRE(std::filesystem::exists(prev));
  CHECK(read_profile(prev).rules[0].protocol == Protocol::ll);
  CHECK(read_profile(path).rules[0].protocol == Protocol::simple);

  // Litter: a temporary left by a killed writer, a broken profile, a non-profile.
  autotune::write_file_atomically(dir.path() / "store" / ".x-nccl2.28.toml.tmp.AbC123", "half");
  autotune::write_file_atomically(dir.path() / "store" / "broken.toml", "schema = 1\n[cluster\n");
  autotune::write_file_atomically(dir.path() / "store" / "notes.txt", "hello");

  auto all = store.list();
  REQUIRE(all.size() == 4);
  CHECK(all[0].file.filename() == "broken.toml");
  CHECK_FALSE(all[0].profile);
  CHECK(all[0].error.find("broken.toml:2: TOML syntax") != std::string::npos);
  CHECK(all[1].profile);

  auto by_name = store.find_by_name("dgx-a.1");
  REQUIRE(by_name.size() == 2);
  CHECK(by_name[0].profile->provenance.nccl_version == "2.30.1");  // newest first
  CHECK(by_name[1].profile->provenance.nccl_version == "2.28.9");
  CHECK(store.find_by_name("nope").empty());
  auto by_fp = store.find_by_fingerprint("fp-a100");
  REQUIRE(by_fp.size() == 1);
  CHECK(by_fp[0].profile->cluster.name == "other");
  CHECK(store.find_by_fingerprint("").empty());

  Profile bad = a;
  bad.rules[0].max_bytes = 0;
  bad.rules[0].min_bytes = 5;
  CHECK_THROWS_AS(store.save(bad), InputError);
}

TEST_CASE("store: every saved version stays readable under its digest, written once", "[store]") {
  TempDir dir;
  Store store(dir.path() / "store");
  Profile a = make_profile("a", "fp", "2.28.9");
  const fs::path path = store.save(a);
  const std::string first_text = autotune::read_file(path);
  const fs::path first = Store::version_path(path, digest_text(profile_digest(first_text)));
  CHECK(first.parent_path() == dir.path() / "store" / "versions");
  REQUIRE(fs::exists(first));
  CHECK(autotune::read_file(first) == first_text);
  CHECK(fs::exists(compiled_rules_path(first)));

  a.rules[0].protocol = Protocol::simple;
  store.save(a);
  const fs::path second = Store::version_path(path, digest_text(profile_digest(autotune::read_file(path))));
  CHECK(second != first);
  CHECK(read_profile(second).rules[0].protocol == Protocol::simple);
  CHECK(autotune::read_file(first) == first_text);  // the old version is untouched

  // Saving the same content again does not write its version anew (a job may be reading it).
  const auto stamp = fs::last_write_time(first);
  fs::last_write_time(first, stamp - std::chrono::hours(1));
  a.rules[0].protocol = Protocol::ll;
  store.save(a);
  CHECK(fs::last_write_time(first) == stamp - std::chrono::hours(1));
  CHECK(store.list().size() == 1);  // versions are not profiles of the store
}

TEST_CASE("store: a cluster's journal lies beside its profile, under the sanitised name", "[store]") {
  Store store("/s");
  CHECK(store.journal_path_for("h100-2n", "2.28.9") == fs::path("/s/h100-2n-nccl2.28.journal.jsonl"));
  Profile p;
  p.cluster.name = "h100-2n";
  p.provenance.nccl_version = "2.28.1";
  CHECK(Store::journal_beside(store.path_for(p)) == store.journal_path_for("h100-2n", "2.28.9"));
}

TEST_CASE("store: a name that is not its own file name is refused, never mapped onto another's", "[store]") {
  // "a/b" and "a_b" (or "a\nb") would share one file: one cluster's profile would replace the other's.
  Store store("/s");
  auto refusal = [&](const std::string& name) {
    try {
      store.journal_path_for(name, "2.28.9");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  CHECK(refusal("a_b") == "(accepted)");
  CHECK(refusal("a/b") ==
        "cluster name \"a/b\": expected 1 to 100 letters, digits, '.', '_' or '-', not "
        "starting with '.' (the name is the profile's file name in the store); found '/'");
  CHECK_THAT(refusal("a\nb"), Catch::EndsWith("found '\\x0a'"));
  CHECK_THAT(refusal("a\nb"), Catch::StartsWith("cluster name \"a\\x0ab\""));
  CHECK_THAT(refusal(std::string("a\0b", 3)), Catch::EndsWith("found '\\x00'"));
  CHECK_THAT(refusal("../y"), Catch::EndsWith("found a leading '.'"));
  CHECK_THAT(refusal(""), Catch::EndsWith("found an empty name"));
  CHECK_THAT(refusal(std::string(101, 'n')), Catch::EndsWith("found 101 characters"));
  CHECK(refusal(std::string(100, 'n')) == "(accepted)");
}

TEST_CASE("store: a store that is a file is refused, not written into", "[store]") {
  TempDir dir;
  const auto file = dir.write("store", "not a directory");
  Profile p;
  p.cluster.name = "c";
  p.provenance.nccl_version = "2.28.1";
  CHECK_THROWS_WITH(
      Store(file).path_for(p),
      file.string() + ": expected a profile store (a directory, or none yet); found not a directory");
}

TEST_CASE("store: default directory from the environment", "[store]") {
  const char* keep_store = getenv("NCCL_AUTOTUNE_STORE");
  const char* keep_xdg = getenv("XDG_DATA_HOME");
  std::string saved_store = keep_store ? keep_store : "", saved_xdg = keep_xdg ? keep_xdg : "";
  setenv("NCCL_AUTOTUNE_STORE", "/shared/profiles", 1);
  CHECK(Store::default_dir() == "/shared/profiles");
  unsetenv("NCCL_AUTOTUNE_STORE");
  setenv("XDG_DATA_HOME", "/home/u/.data", 1);
  CHECK(Store::default_dir() == "/home/u/.data/nccl-autotune");
  unsetenv("XDG_DATA_HOME");
  if (getenv("HOME"))
    CHECK(Store::default_dir() == std::filesystem::path(getenv("HOME")) / ".local/share/nccl-autotune");
  if (keep_store) setenv("NCCL_AUTOTUNE_STORE", saved_store.c_str(), 1);
  if (keep_xdg) setenv("XDG_DATA_HOME", saved_xdg.c_str(), 1);
}

TEST_CASE("nccl csv: the example plugin's own example imports", "[nccl_csv]") {
  std::string text =
      "# Single-node, small allreduce\n"
      "allreduce,0,65536,tree,simple,2,1,-1,-1,-1\n"
      "\n"
      "allreduce,65537,1048576,ring,simple,4,4,32,-1\n"
      "allreduce,1048577,4294967295,ring,ll128,-1,-1,-1\n"
      "allgather, 0, 1024, nvls, simple, -1, -1, 8\r\n"
      "reducescatter,0,1024,collnet_direct,ll,-1,2,-1";
  auto rules = parse_nccl_csv(text, "t.csv");
  REQUIRE(rules.size() == 5);
  CHECK(rules[0].channels == 2);
  CHECK(rules[0].nodes == CountRange{1, 1});
  CHECK_FALSE(rules[0].ranks);
  CHECK(rules[1].ranks == CountRange{32, 32});
  CHECK(rules[2].channels == 0);
  CHECK(rules[2].max_bytes == 4294967295u);
  CHECK(rules[2].protocol == Protocol::ll128);
  CHECK(rules[3].algorithm == Algorithm::nvls);
  CHECK(rules[4].algorithm == Algorithm::collnet_direct);
  CHECK(rules[4].source_line == 7);

  std::string csv = format_nccl_csv(rules);
  auto back = parse_nccl_csv(csv, "back.csv");
  CHECK(format_nccl_csv(back) == csv);
  CHECK(csv.find("allreduce,1048577,4294967295,ring,ll128,-1,-1,-1\n") != std::string::npos);
  CHECK(csv.find("reducescatter,0,1024,collnet_direct,ll,-1,2,-1\n") != std::string::npos);
}

TEST_CASE("nccl csv: a line the example plugin would not run as written is named with its reason",
          "[nccl_csv]") {
  CHECK(csv_error("allreduce,0,1,ring,simple,-1,-1\n") ==
        "t.csv:1: row: expected 8 to 10 fields "
        "(collective_type,min_bytes,max_bytes,algorithm,protocol,channels,"
        "nNodes,nRanks[,numPipeOps[,regBuff]]); found 7");
  CHECK(csv_error("allreduce,0,1,ring,simple,-1,-1,-1,1,1,1\n") ==
        "t.csv:1: row: expected 8 to 10 fields "
        "(collective_type,min_bytes,max_bytes,algorithm,protocol,channels,"
        "nNodes,nRanks[,numPipeOps[,regBuff]]); found 11");
  CHECK(csv_error("#c\nallreduce,0,1,ring,simple,-1,-1,-1,0\n") ==
        "t.csv:2: numPipeOps: expected -1 (any) or a count >= 1; found \"0\"");
  CHECK(csv_error("allreduce,0,1,ring,simple,-1,-1,-1,-1,2\n") ==
        "t.csv:1: regBuff: expected -1 (any), 0 or 1; found \"2\"");
  CHECK(csv_error("allreduce,0,1,collnetdirect,simple,-1,-1,-1\n") ==
        "t.csv:1: algorithm: expected one of tree, ring, collnet_direct, collnet_chain, nvls, nvls_tree, "
        "pat (in lower case, as NCCL's example plugin compares them); found \"collnetdirect\"");
  CHECK(csv_error("allreduce,0,1,Tree,simple,-1,-1,-1\n") ==
        "t.csv:1: algorithm: expected one of tree, ring, collnet_direct, collnet_chain, nvls, nvls_tree, "
        "pat (in lower case, as NCCL's example plugin compares them); found \"Tree\"");
  CHECK(csv_error("allreduce,5,1,ring,ll,-1,-1,-1\n") ==
        "t.csv:1: max_bytes: expected at least min_bytes (5); found 1 (no size would match)");
  CHECK(csv_error("allreduce,0,1,ring,ll,65,-1,-1\n") ==
        "t.csv:1: channels: expected -1 or 0 (NCCL decides) or 1..64; found \"65\"");
  CHECK(csv_error("allreduce,0,1,ring,ll,-1,0,-1\n") ==
        "t.csv:1: nNodes: expected -1 (any) or a count >= 1; found \"0\"");
  CHECK(csv_error("alltoall,0,1,ring,ll,-1,-1,-1\n") ==
        "t.csv:1: collective_type: expected one of broadcast, reduce, allgather, reducescatter, allreduce "
        "(in lower case, as NCCL's example plugin compares them); found \"alltoall\"");
  CHECK(csv_error("allreduce,-1,1,ring,ll,-1,-1,-1\n") ==
        "t.csv:1: min_bytes: expected a byte count >= 0; found \"-1\"");
  CHECK(csv_error("allreduce,0,64K,ring,ll,-1,-1,-1\n") ==
        "t.csv:1: max_bytes: expected a byte count >= 0 or -1 (no limit); found \"64K\"");
  CHECK(csv_error("allreduce,,100,ring,ll,-1,-1,-1\n") ==
        "t.csv:1: min_bytes: expected a byte count >= 0; found \"\"");
}

TEST_CASE("nccl csv: lines it cannot use are skipped and the rest kept, in file order", "[nccl_csv]") {
  const std::string text =
      "# a comment\n"
      "   # an indented comment\n"
      "allreduce,0,1023,ring,ll,0,-1,-1\n"            // channels 0: NCCL decides, as -1
      "allreduce,0,1023,warp,ll,-1,-1,-1\n"           // skipped
      "broadcast,0,32768,tree,simple,-1,1,-1,-1,1\n"  // NCCL never runs it: kept, never applies
      "\r\n"
      "allgather,0,-1,ring,simple,4,2,-1,1,0\n"  // max -1: no upper limit
      "reduce,0,100,ring,simple,-1,-1,-1,-1,-1\r\n"
      "garbage\n";
  CsvRules read = read_nccl_csv(text);
  REQUIRE(read.rules.size() == 4);
  CHECK(read.rules[0].source_line == 3);
  CHECK(read.rules[0].channels == 0);
  CHECK(read.rules[1].collective == Collective::broadcast);
  CHECK(read.rules[1].algorithm == Algorithm::tree);
  CHECK(read.rules[1].reg_buff == std::optional<bool>(true));
  CHECK_FALSE(read.rules[1].pipe_ops);
  CHECK(read.rules[2].max_bytes == UINT64_MAX);
  CHECK(read.rules[2].pipe_ops == CountRange{1, 1});
  CHECK(read.rules[2].reg_buff == std::optional<bool>(false));
  CHECK(read.rules[3].source_line == 8);
  CHECK_FALSE(read.rules[3].has_call_conditions());
  REQUIRE(read.skipped.size() == 2);
  CHECK(read.skipped[0].line == 4);
  CHECK(read.skipped[0].message.rfind("algorithm: expected one of", 0) == 0);
  CHECK(read.skipped[1].line == 9);
  CHECK(read.skipped[1].message.rfind("row: expected 8 to 10 fields", 0) == 0);

  std::vector<Rule> rules = read.rules;
  auto dropped = drop_combinations_nccl_never_runs(rules);
  REQUIRE(dropped.size() == 1);
  CHECK(dropped[0].line == 5);
  CHECK(dropped[0].message ==
        "algorithm: NCCL runs broadcast with ring only; found \"tree\" (NCCL's example plugin never applies "
        "this line either)");
  CHECK(rules.size() == 3);
}

TEST_CASE("nccl csv: conditions and wildcards export as 10 fields and read back", "[nccl_csv]") {
  CsvRules read = read_nccl_csv(
      "allreduce,0,65536,tree,simple,2,1,-1,-1,1\n"
      "allreduce,65537,1048576,ring,simple,4,4,32,1,0\n"
      "allreduce,1048577,4294967295,ring,ll128,-1,-1,-1,4,-1\n"
      "allgather,0,4294967295,ring,simple,4,2,-1\n");
  REQUIRE(read.skipped.empty());
  const std::string csv = format_nccl_csv(read.rules);
  CHECK(csv.find("allreduce,0,65536,tree,simple,2,1,-1,-1,1\n") != std::string::npos);
  CHECK(csv.find("allreduce,65537,1048576,ring,simple,4,4,32,1,0\n") != std::string::npos);
  CHECK(csv.find("allreduce,1048577,4294967295,ring,ll128,-1,-1,-1,4,-1\n") != std::string::npos);
  CHECK(csv.find("allgather,0,4294967295,ring,simple,4,2,-1\n") != std::string::npos);
  CHECK(format_nccl_csv(parse_nccl_csv(csv, "back.csv")) == csv);

  Rule chunked = read.rules[3];
  chunked.chunk_bytes = 1 << 20;
  CHECK_THROWS_WITH(format_nccl_csv({chunked}), Catch::Contains("no chunk size column"));
}

TEST_CASE("nccl csv: export expands bounded scale ranges and refuses open ones", "[nccl_csv]") {
  Rule r;
  r.min_bytes = 0;
  r.max_bytes = 1023;
  r.nodes = CountRange{2, 3};
  r.ranks = CountRange{16, 16};
  r.busbw_gbps = 10.0;
  std::string csv = format_nccl_csv({r});
  CHECK(csv.find("allreduce,0,1023,ring,simple,-1,2,16\nallreduce,0,1023,ring,simple,-1,3,16\n") !=
        std::string::npos);
  r.nodes = CountRange{4, std::numeric_limits<int>::max()};
  CHECK_THROWS_WITH(format_nccl_csv({r}), Catch::Contains("open range 4+"));
}
