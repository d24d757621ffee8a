// CSV compatibility: on the same config file, the plugin makes the same decision as NCCL's example tuner
// plugin (plugins/tuner/example/plugin.c in NCCL 2.29.7 to 2.30.7, ext-tuner/example before), call by call.
// The reference below is our own model of that plugin, written from reading its source: lines read with
// fgets, skipped when their first character is '#' or the line is empty, split at commas with strtok and
// trimmed of spaces and tabs, used when they have 8 to 10 fields; names compared exactly (an unknown one
// reads as allreduce, ring or simple), numbers read with strtoull and atoi (so max_bytes -1 is 2^64-1). Per
// call, lines in file order; a line matches on collective, min_bytes <= nBytes <= max_bytes, and nNodes,
// nRanks, numPipeOps, regBuff each equal or -1; the first match whose cost-table entry is not IGNORE gets 0.0
// and, unless its channels are -1, sets *nChannels; a match on an IGNORE entry passes to the next line. The
// one deliberate difference, not compared: the example writes *nChannels = 1 on every call before looking, so
// a call no line matches runs on one channel; the plugin leaves NCCL's 0 ("NCCL decides"). Test files are
// ours, in the style of NCCL's shipped nccl_tuner.conf and of optimize_config.py's output.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "nccl_harness.hpp"
#include "plugin_fixtures.hpp"

using namespace autotune::plugin::test;
using autotune::test::TempDir;

namespace {

struct Row {
  int collective;
  uint64_t min_bytes, max_bytes;
  int algorithm, protocol, channels, nodes, ranks, pipe_ops = -1, reg_buff = -1;
};

int parse_or(const char* text, std::initializer_list<const char*> names, int fallback) {
  int i = 0;
  for (const char* n : names) {
    if (std::strcmp(text, n) == 0) return i;
    ++i;
  }
  return fallback;
}

// The example's reading of its file.
std::vector<Row> example_rows(const std::string& text) {
  std::vector<Row> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> tokens;
    char copy[256];
    std::strncpy(copy, line.c_str(), sizeof copy - 1);
    copy[sizeof copy - 1] = '\0';
    for (char* tok = std::strtok(copy, ","); tok && tokens.size() < 10; tok = std::strtok(nullptr, ",")) {
      while (*tok == ' ' || *tok == '\t') ++tok;
      std::string t(tok);
      while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.pop_back();
      tokens.push_back(t);
    }
    if (tokens.size() < 8) continue;
    Row r;
    r.collective =
        parse_or(tokens[0].c_str(), {"broadcast", "reduce", "allgather", "reducescatter", "allreduce"}, 4);
    r.min_bytes = std::strtoull(tokens[1].c_str(), nullptr, 10);
    r.max_bytes = std::strtoull(tokens[2].c_str(), nullptr, 10);
    r.algorithm =
        parse_or(tokens[3].c_str(),
                 {"tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"}, 1);
    r.protocol = parse_or(tokens[4].c_str(), {"ll", "ll128", "simple"}, 2);
    r.channels = std::atoi(tokens[5].c_str());
    r.nodes = std::atoi(tokens[6].c_str());
    r.ranks = std::atoi(tokens[7].c_str());
    if (tokens.size() >= 9) r.pipe_ops = std::atoi(tokens[8].c_str());
    if (tokens.size() >= 10) r.reg_buff = std::atoi(tokens[9].c_str());
    rows.push_back(r);
  }
  return rows;
}

struct Call {
  int collective;
  uint64_t bytes;
  int pipe_ops, reg_buff;
};

struct Reference {
  bool applied = false;
  int channels_written = 1;  // the example's default on every call
  int row_channels = -1;     // the applied row's channels column
  CostTable table;
};

Reference example_plugin(const std::vector<Row>& rows, const Call& call, int nodes, int ranks,
                         CostTable table) {
  Reference ref;
  for (const Row& r : rows) {
    if (r.collective != call.collective || call.bytes < r.min_bytes || call.bytes > r.max_bytes) continue;
    if ((r.nodes != -1 && r.nodes != nodes) || (r.ranks != -1 && r.ranks != ranks)) continue;
    if ((r.pipe_ops != -1 && r.pipe_ops != call.pipe_ops) ||
        (r.reg_buff != -1 && r.reg_buff != call.reg_buff))
      continue;
    if (table.t[r.algorithm][r.protocol] == -1.0f) continue;  // IGNORE: the next line may apply
    table.t[r.algorithm][r.protocol] = 0.0f;
    if (r.channels != -1) ref.channels_written = r.channels;
    ref.row_channels = r.channels;
    ref.applied = true;
    break;
  }
  ref.table = table;
  return ref;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

struct Counts {
  int compared = 0, applied = 0, fell_through = 0;
};

// Every row's edges, sizes around them, every collective, a few scales, numPipeOps and regBuff values, and
// cost tables with holes where NCCL rules entries out: each call on the plugin against the reference.
Counts compare_with_example(const std::string& file, const std::vector<Row>& rows) {
  ScopedEnv env("NCCL_TUNER_CONFIG_FILE", file);
  ScopedEnv none("NCCL_AUTOTUNE_PROFILE", "");
  std::vector<uint64_t> sizes = {0, 1, 1023, 1024, 1025, 1ull << 30, 1ull << 33, UINT64_MAX};
  for (const Row& r : rows)
    for (uint64_t b : {r.min_bytes, r.max_bytes, r.max_bytes + 1, r.min_bytes ? r.min_bytes - 1 : 0})
      sizes.push_back(b);
  Counts n;
  for (int version : {4, 5, 6, 7})
    for (auto [nodes, ranks] : {std::pair{1, 8}, {2, 16}, {4, 4}, {4, 32}}) {
      Comm comm(version, ranks, nodes);
      for (int coll = 0; coll < 5; ++coll)
        for (uint64_t bytes : sizes)
          for (int pipe_ops : {1, 2, 4})
            for (int reg_buff : {0, 1})
              for (int hole = 0; hole < 3; ++hole) {
                CostTable table = nccl_like_table(coll);
                if (hole == 1) table.t[1][1] = table.t[0][0] = -1.0f;  // NCCL_PROTO=^LL128-like
                if (hole == 2) table.t[1][2] = table.t[0][2] = -1.0f;  // no Simple for Ring or Tree
                const Call call{coll, bytes, pipe_ops, reg_buff};
                Reference ref = example_plugin(rows, call, nodes, ranks, table);
                int channels = 0;
                CostTable ours = table;
                REQUIRE(comm.coll_info(coll, bytes, ours, channels, reg_buff, pipe_ops) == ncclSuccess);
                INFO("v" << version << " nodes " << nodes << " ranks " << ranks << " coll " << coll
                         << " bytes " << bytes << " pipeOps " << pipe_ops << " regBuff " << reg_buff
                         << " hole " << hole);
                CHECK(ours == ref.table);
                CHECK(nccl_choice(ours) == nccl_choice(ref.table));
                // The example writes 1 when nothing applies, the plugin leaves NCCL's 0 (the deliberate
                // difference); where a line applies both write its channels (0 and -1 leave NCCL's).
                CHECK(channels == (ref.applied && ref.row_channels > 0 ? ref.row_channels : 0));
                if (ref.applied)
                  CHECK(ref.channels_written == (ref.row_channels == -1 ? 1 : ref.row_channels));
                ++n.compared;
                n.applied += ref.applied;
              }
    }
  return n;
}

std::vector<LogLine> take_at(int level) {
  std::vector<LogLine> out;
  for (auto& l : LogRecorder::instance().take())
    if (l.level == level) out.push_back(l);
  return out;
}

}  // namespace

TEST_CASE("CSV config: our file in the style of NCCL's nccl_tuner.conf decides as NCCL's example plugin") {
  const std::string path = std::string(AUTOTUNE_PLUGIN_TEST_DATA) + "/example_style.conf";
  const std::vector<Row> rows = example_rows(read_text(path));
  REQUIRE(rows.size() == 14);
  LogRecorder::instance().take();
  {
    ScopedEnv env("NCCL_TUNER_CONFIG_FILE", path);
    Comm comm(7, 16, 2);
    auto info = take_at(NCCL_LOG_INFO);
    REQUIRE(info.size() == 1);
    CHECK(info[0].text.find("(CSV, source imported, digest ") != std::string::npos);
    CHECK(info[0].text.find("): 11 of 14 rules apply to 2x8 (16 ranks)") != std::string::npos);
  }
  Counts n = compare_with_example(path, rows);
  CHECK(n.compared > 30000);
  CHECK(n.applied > 5000);
  WARN("example_style.conf: compared " << n.compared << " calls, " << n.applied << " steered");
}

TEST_CASE("CSV config: optimize_config.py-shaped output decides as NCCL's example plugin") {
  const std::string path = std::string(AUTOTUNE_PLUGIN_TEST_DATA) + "/optimize_config_style.conf";
  const std::vector<Row> rows = example_rows(read_text(path));
  REQUIRE(rows.size() == 12);
  Counts n = compare_with_example(path, rows);
  CHECK(n.compared > 30000);
  CHECK(n.applied > 2000);
}

TEST_CASE("CSV config: a line the plugin cannot use gets one WARN naming it, once, and the rest apply") {
  TempDir dir;
  const std::string good =
      "allreduce,0,1023,tree,ll,2,-1,-1\n"
      "allreduce,1024,4095,ring,simple,-1,-1,-1\n";
  const std::string bad =
      "# header\n"
      "allreduce,0,1023,tree,ll,2,-1,-1\n"
      "allreduce,0,4095,warp,simple,4,-1,-1\n"  // line 3: the example would read "warp" as ring
      "allreduce,1024,4095,ring,simple,-1,-1,-1\n"
      "allreduce,0,100,ring,ll\n";  // line 5: too few fields, the example ignores it too
  write_text(dir / "bad.conf", bad);
  write_text(dir / "good.conf", good);
  ScopedEnv env("NCCL_TUNER_CONFIG_FILE", (dir / "bad.conf").string());
  ScopedEnv none("NCCL_AUTOTUNE_PROFILE", "");
  LogRecorder::instance().take();
  Comm first(6, 16, 2);
  auto warn = take_at(NCCL_LOG_WARN);
  REQUIRE(warn.size() == 2);
  CHECK(warn[0].text.find(
            "bad.conf:3: line skipped, the others apply: algorithm: expected one of tree, ring") !=
        std::string::npos);
  CHECK(warn[1].text.find("bad.conf:5: line skipped, the others apply: row: expected 8 to 10 fields") !=
        std::string::npos);
  Comm second(6, 16, 2);  // the file is read once per process: no second round of warnings
  CHECK(take_at(NCCL_LOG_WARN).empty());
  // The rest decide as the example does on the file without the skipped lines.
  const std::vector<Row> rows = example_rows(good);
  for (uint64_t bytes : {0, 1023, 1024, 4095, 4096}) {
    CostTable table = nccl_like_table(4), ours = table;
    Reference ref = example_plugin(rows, Call{4, bytes, 1, 0}, 2, 16, table);
    int channels = 0;
    first.coll_info(4, bytes, ours, channels);
    CHECK(ours == ref.table);
  }
}

TEST_CASE("CSV config: more than 20 unusable lines give 20 WARN lines and a count") {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 30; ++i) text += "allreduce,0,1,ring,simple,-1,-1\n";
  text += "allreduce,0,100,ring,simple,3,-1,-1\n";
  write_text(dir / "many.conf", text);
  ScopedEnv env("NCCL_TUNER_CONFIG_FILE", (dir / "many.conf").string());
  ScopedEnv none("NCCL_AUTOTUNE_PROFILE", "");
  LogRecorder::instance().take();
  Comm comm(5, 8, 1);
  auto warn = take_at(NCCL_LOG_WARN);
  REQUIRE(warn.size() == 21);
  CHECK(warn[20].text.find("10 more lines skipped") != std::string::npos);
  CHECK(comm.decide(4, 50).channels == 3);
}
