// A point-to-point setting enters [env] only where it wins beyond the noise for point-to-point traffic and
// slows no collective measured beside it beyond the noise: synthetic journals with known effects, and the
// simulator's own model of NCCL_P2P_NET_CHUNKSIZE.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "runners/process_group.hpp"
#include "search/derive.hpp"
#include "search/p2p_setting.hpp"
#include "simulator/sim_cluster.hpp"
#include "simulator/sim_runner.hpp"
#include "tests/simulator/test_topologies.hpp"

using namespace autotune;
using namespace autotune::search;
using autotune::nccl::Collective;
using autotune::nccl::Operation;

namespace {

const runners::ProcessSetting kDefault{"default", {}};
const runners::ProcessSetting kChunk{"p2p_net_chunk=524288", {{"NCCL_P2P_NET_CHUNKSIZE", "524288"}}};

// Five repetitions around `us`, spread by 1%.
JournalRecord record(const runners::ProcessSetting& s, Operation op, uint64_t bytes, double us) {
  JournalRecord r;
  r.setting = s;
  r.scale = {2, 16};
  r.source = "simulated";
  r.measurement.request.set_operation(op);
  r.measurement.request.bytes = bytes;
  for (double f : {0.99, 0.995, 1.0, 1.005, 1.01}) r.measurement.times_us.push_back(us * f);
  return r;
}

std::vector<JournalRecord> journal(double p2p_factor, double allreduce_factor) {
  std::vector<JournalRecord> out;
  for (uint64_t bytes : {1u << 20, 16u << 20, 256u << 20}) {
    const double us = static_cast<double>(bytes) / 40e3;
    out.push_back(record(kDefault, Operation::alltoall, bytes, us));
    out.push_back(record(kChunk, Operation::alltoall, bytes, us * p2p_factor));
    out.push_back(record(kDefault, Operation::allreduce, bytes, us / 2));
    out.push_back(record(kChunk, Operation::allreduce, bytes, us / 2 * allreduce_factor));
  }
  return out;
}

}  // namespace

TEST_CASE("p2p setting: exported where it wins for all-to-all and costs no collective", "[p2p_setting]") {
  auto v = judge_p2p_setting(journal(0.8, 1.0), kChunk.id);
  CHECK(v.exported);
  CHECK(v.p2p_gain.gain == Approx(0.25).epsilon(0.01));  // 1 / 0.8 - 1
  CHECK(v.collectives_compared == 1);
  CHECK_FALSE(v.costs);
  CHECK(v.why.find("no collective slower beyond the noise (1 series compared)") != std::string::npos);
}

TEST_CASE("p2p setting: one that helps all-to-all but slows all-reduce is not exported", "[p2p_setting]") {
  auto v = judge_p2p_setting(journal(0.8, 1.1), kChunk.id);
  CHECK_FALSE(v.exported);
  REQUIRE(v.costs);
  CHECK(v.costs->find("allreduce default at 2x8 (16 ranks): -9.1%") == 0);
  CHECK(v.why.find("but it slows allreduce") != std::string::npos);
  // Within the noise (1% spread, 0.5% slower) the collective is no reason to refuse.
  CHECK(judge_p2p_setting(journal(0.8, 1.005), kChunk.id).exported);
}

TEST_CASE("p2p setting: a gain within the threshold or unmeasured is not exported", "[p2p_setting]") {
  auto small = judge_p2p_setting(journal(0.99, 1.0), kChunk.id);
  CHECK_FALSE(small.exported);
  CHECK(small.why.find("not beyond +3.0%") != std::string::npos);
  auto none = judge_p2p_setting(journal(0.8, 1.0), "never-measured");
  CHECK_FALSE(none.exported);
  CHECK(none.why.find("no point-to-point measured under both") == 0);
}

TEST_CASE("p2p setting: in the simulator a larger network chunk wins send/recv and leaves all-reduce alone",
          "[p2p_setting][sim]") {
  const sim::SimCluster cluster = sim::describe_cluster(::autotune::test::h100_node(), 4);
  std::vector<JournalRecord> records;
  for (const auto& setting : {kDefault, kChunk}) {
    sim::SimRunner runner(sim::SimModel(cluster, setting.env), 7, 0.02, runners::job_processes());
    std::vector<runners::MeasureRequest> batch;
    for (uint64_t bytes : {64u << 20, 256u << 20}) {
      runners::MeasureRequest r;
      r.set_operation(Operation::sendrecv);
      r.bytes = bytes;
      batch.push_back(r);
      r.set_operation(Operation::allreduce);
      batch.push_back(r);
    }
    for (auto& m : runner.run(batch)) {
      JournalRecord rec;
      rec.setting = setting;
      rec.scale = {4, 32};
      rec.source = "simulated";
      rec.measurement = std::move(m);
      records.push_back(std::move(rec));
    }
  }
  auto v = judge_p2p_setting(records, kChunk.id);
  CHECK(v.exported);
  CHECK(v.p2p_gain.low > 0.03);
  CHECK(v.collectives_compared == 1);
}

TEST_CASE("p2p setting: derive never takes it as the rules' setting and exports it only where it wins",
          "[p2p_setting]") {
  // Faster all-reduce too: still not the rules' setting (a point-to-point setting is judged apart), but its
  // env joins [env] beside NCCL's defaults.
  const auto records = journal(0.8, 0.9);
  Derivation d = derive(records, DeriveOptions{});
  CHECK(d.setting.id == "default");
  REQUIRE(d.p2p_setting);
  CHECK(d.p2p_setting->id == kChunk.id);
  CHECK(d.env == kChunk.env);
  REQUIRE(d.p2p_verdicts.size() == 1);
  CHECK(d.p2p_verdicts[0].exported);
  // Slower all-reduce: judged, said, not exported.
  d = derive(journal(0.8, 1.2), DeriveOptions{});
  CHECK(d.setting.id == "default");
  CHECK_FALSE(d.p2p_setting);
  CHECK(d.env.empty());
  bool said = false;
  for (const auto& n : d.notes) said = said || n.find("left out of [env]") != std::string::npos;
  CHECK(said);
}

TEST_CASE("p2p setting: a worker's part under it alone still derives", "[p2p_setting]") {
  // An orchestrated calibration's worker measures its own setting only; the orchestrator judges it later.
  std::vector<JournalRecord> own;
  for (const auto& r : journal(0.8, 1.0))
    if (r.setting.id == kChunk.id) own.push_back(r);
  const Derivation d = derive(own, DeriveOptions{});
  CHECK(d.setting.id == kChunk.id);
  REQUIRE(d.p2p_verdicts.size() == 1);
  CHECK_FALSE(d.p2p_verdicts[0].exported);
}
