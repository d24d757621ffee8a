// CSV compatibility: on the same config file, the plugin makes the same decision as NCCL's example tuner
// plugin (plugins/tuner/example/plugin.c), over a grid of collectives, sizes, nodes and ranks. The reference
// below is our own model of that plugin's matching, written from its documented behaviour: rows in file
// order; a row matches on collective, min_bytes <= nBytes <= max_bytes, nNodes/nRanks equal or -1; the first
// match whose cost-table entry is not IGNORE gets 0.0 and, unless -1, its channels. Deliberate differences,
// not compared: the example writes *nChannels = 1 on every call, also when nothing matched (it forces one
// channel; we leave NCCL's 0 = "NCCL decides"), and when its first match hits an IGNORE entry it falls
// through to later rows (we take the first matching row or nothing).
#include <catch2/catch.hpp>
#include <sstream>

#include "nccl_harness.hpp"
#include "plugin_fixtures.hpp"

using namespace autotune::plugin::test;

namespace {

struct Row {
  int collective;
  uint64_t min_bytes, max_bytes;
  int algorithm, protocol, channels, nodes, ranks;
};

const char* kCollectives[] = {"broadcast", "reduce", "allgather", "reducescatter", "allreduce"};
const char* kAlgorithms[] = {"tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"};
const char* kProtocols[] = {"ll", "ll128", "simple"};

struct Reference {
  bool applied = false;
  bool fell_through = false;  // the first matching row hit IGNORE and a later one applied
  int channels_written = 1;   // the example's default on every call
  int row_channels = -1;      // the applied row's channels column
  CostTable table;
};

Reference example_plugin(const std::vector<Row>& rows, int collective, uint64_t bytes, int nodes, int ranks,
                         CostTable table) {
  Reference ref;
  bool first_match_ignored = false;
  for (const Row& r : rows) {
    if (r.collective != collective || bytes < r.min_bytes || bytes > r.max_bytes) continue;
    if (r.nodes != -1 && r.nodes != nodes) continue;
    if (r.ranks != -1 && r.ranks != ranks) continue;
    if (table.t[r.algorithm][r.protocol] != -1.0f) {
      table.t[r.algorithm][r.protocol] = 0.0f;
      if (r.channels != -1) ref.channels_written = r.channels;
      ref.row_channels = r.channels;
      ref.applied = true;
      ref.fell_through = first_match_ignored;
      break;
    }
    first_match_ignored = true;
  }
  ref.table = table;
  return ref;
}

}  // namespace

TEST_CASE("CSV config: the same decisions as NCCL's example plugin on a grid") {
  // Overlapping rows, wildcard and exact scales, channels -1 and set. (Rows NCCL can never run, such as Tree
  // for Reduce, are refused by the importer as a whole file: the example would accept and never apply them.)
  const std::vector<Row> rows = {
      {4, 0, 32767, 0, 0, -1, -1, -1},      {4, 0, 65535, 1, 1, 8, 2, -1},  // overlaps the first
      {4, 65536, 1048576, 1, 2, 4, -1, 16}, {4, 1000, 2000, 1, 2, 2, 1, 8},
      {2, 0, 1 << 20, 1, 0, -1, -1, -1},    {2, 4096, 8192, 6, 2, 2, 2, 16},  // PAT inside the ring range
      {3, 0, 1 << 30, 4, 2, 16, -1, -1},    {0, 0, 4096, 1, 1, -1, 4, 32},
  };
  std::ostringstream csv;
  csv << "# collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks\n\n";
  for (const Row& r : rows)
    csv << kCollectives[r.collective] << "," << r.min_bytes << "," << r.max_bytes << ","
        << kAlgorithms[r.algorithm] << "," << kProtocols[r.protocol] << "," << r.channels << "," << r.nodes
        << "," << r.ranks << "\n";
  TempDir dir;
  write_text(dir / "nccl_tuner.conf", csv.str());
  ScopedEnv env("NCCL_TUNER_CONFIG_FILE", (dir / "nccl_tuner.conf").string());
  ScopedEnv none("NCCL_AUTOTUNE_PROFILE", "");

  std::vector<uint64_t> sizes = {0, 1, 99, 100, 101, 1 << 30, (1ull << 30) + 1};
  for (const Row& r : rows)
    for (uint64_t b : {r.min_bytes, r.max_bytes, r.max_bytes + 1, r.min_bytes ? r.min_bytes - 1 : 0})
      sizes.push_back(b);

  int compared = 0, applied = 0, fell_through = 0;
  for (int version : {3, 4, 5, 6})
    for (int nodes : {1, 2, 4})
      for (int ranks : {8, 16, 32}) {
        LogRecorder::instance().take();
        Comm comm(version, ranks, nodes);
        std::vector<std::string> info;
        for (const auto& line : LogRecorder::instance().take()) {
          UNSCOPED_INFO("log " << line.level << ": " << line.text);
          if (line.level == NCCL_LOG_INFO) info.push_back(line.text);
        }
        for (const auto& line : info) UNSCOPED_INFO(line);
        REQUIRE(info.size() == 1);
        CHECK(info[0].find("(CSV, source imported)") != std::string::npos);
        for (int coll = 0; coll < 5; ++coll)
          for (uint64_t bytes : sizes)
            for (bool hole : {false, true}) {
              CostTable table = nccl_like_table(coll);
              if (hole) table.t[1][1] = table.t[0][0] = -1.0f;  // NCCL_PROTO=^LL128-like: cells ruled out
              Reference ref = example_plugin(rows, coll, bytes, nodes, ranks, table);
              if (ref.fell_through) {
                ++fell_through;
                continue;
              }
              int channels = 0;
              CostTable ours = table;
              REQUIRE(comm.coll_info(coll, bytes, ours, channels) == ncclSuccess);
              INFO("v" << version << " nodes " << nodes << " ranks " << ranks << " coll " << coll << " bytes "
                       << bytes << " hole " << hole);
              CHECK(ours == ref.table);
              CHECK(nccl_choice(ours) == nccl_choice(ref.table));
              CHECK(channels == (ref.applied && ref.row_channels != -1 ? ref.row_channels : 0));
              ++compared;
              applied += ref.applied;
            }
      }
  CHECK(compared > 3000);
  CHECK(applied > 300);  // the grid exercises real matches, not only misses
  WARN("compared " << compared << " calls (" << applied << " steered); skipped " << fell_through
                   << " where the example falls through past an IGNORE entry");
}
