#include "tests/standin/nccl/tuning.hpp"

#include <array>
#include <cstdarg>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "common/input_error.hpp"
#include "nccl/algo_proto_spec.hpp"
#include "nccl/tuner_loader.hpp"
#include "simulator/sim_cluster.hpp"
#include "simulator/sim_constants.hpp"
#include "simulator/sim_model.hpp"
#include "tests/standin/common/node_topology.hpp"
#include "tests/standin/nccl/debug_log.hpp"
#include "tests/standin/nccl/settings.hpp"

namespace autotune::standin {

namespace {

using nccl::Algorithm;
using nccl::Collective;
using nccl::Protocol;

// The plugin's logger: NCCL's own.
void plugin_log(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt,
                ...) {
  va_list args;
  va_start(args, fmt);
  vlog(static_cast<int>(level), flags, file, line, fmt, args);
  va_end(args);
}

// One plugin per process, opened by the first communicator and kept (NCCL reference-counts it; nothing here
// would gain from closing it between communicators).
const nccl::TunerPlugin* process_plugin() {
  static std::once_flag once;
  static nccl::TunerPlugin* plugin = nullptr;
  std::call_once(once, [] {
    nccl::TunerOpenOptions o;
    if (const char* v = std::getenv("NCCL_TUNER_PLUGIN")) o.plugin = std::string(v);
    o.nccl_version_code = settings().version_code;
    std::vector<std::string> lines;
    plugin = nccl::TunerPlugin::open(o, &lines).release();
    for (const auto& l : lines) log(kLogInfo, kInit | kTuning, __FILE__, __LINE__, "%s", l.c_str());
  });
  return plugin;
}

// The NCCL_* settings the simulator models, from this process's environment (NCCL reads them the same way).
std::map<std::string, std::string> modelled_env() {
  std::map<std::string, std::string> env;
  for (const char* name : {"NCCL_IB_HCA", "NCCL_CROSS_NIC", "NCCL_MAX_NCHANNELS", "NCCL_MIN_NCHANNELS",
                           "NCCL_NVLS_ENABLE", "NCCL_COLLNET_ENABLE"})
    if (const char* v = std::getenv(name)) env[name] = v;
  for (const std::string& name : sim::p2p_env_names())  // what point-to-point work is charged under
    if (const char* v = std::getenv(name.c_str())) env[name] = v;
  return env;
}

template <typename Spec, typename Parse>
std::optional<Spec> env_spec(const char* name, Parse parse) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return parse(v);
}

// The communicator as the simulator sees it: its nodes, and its ranks on each (a block of the node's GPUs).
// It is charged as if alone on its nodes: concurrent communicators (all groups of a split at once) do not
// share the NICs here, as the simulator's shape_cluster(..., concurrent) would have them.
sim::SimModel make_model(const CommShape& shape) {
  const sim::SimCluster whole = sim::describe_cluster(node_topology(), shape.nodes);
  const int per_node = shape.max_local_ranks;
  sim::SimCluster cluster = whole;
  if (per_node >= 1 && whole.node_gpus % per_node == 0) {
    cluster = sim::shape_cluster(whole, per_node, false);
  } else {  // a part of a node that is no even share of it (3 of 8 GPUs): the same, unchecked
    cluster.gpus_per_node = per_node;
    if (per_node == 1) cluster.nvls = false;
  }
  sim::SimDeviations deviations;
  deviations.seed = settings().seed;
  return sim::SimModel(cluster, modelled_env(), deviations);
}

}  // namespace

struct CommTuning::Impl {
  CommShape shape;
  sim::SimModel model;
  std::optional<nccl::AlgoSpec> algo;
  std::optional<nccl::ProtoSpec> proto;
  const nccl::TunerPlugin* plugin = nullptr;
  void* context = nullptr;
  // The model is a pure function of its inputs: each size's table and each choice's cost are computed once.
  using Table = std::array<float, nccl::kNumAlgorithms * nccl::kNumProtocols>;
  mutable std::map<std::pair<Collective, uint64_t>, Table> tables;
  mutable std::map<std::tuple<Collective, uint64_t, int, int, int>, std::pair<int, double>> runs;

  const Table& table_for(Collective c, uint64_t bytes) const {
    auto it = tables.find({c, bytes});
    if (it == tables.end()) {
      it = tables.emplace(std::make_pair(c, bytes), Table{}).first;
      fill(c, bytes, it->second.data());
    }
    return it->second;
  }

  // The cost table NCCL hands the tuner: NCCL's estimate where it would run the entry, -1 elsewhere.
  void fill(Collective c, uint64_t bytes, float* table) const {
    for (Algorithm a : nccl::kAllAlgorithms)
      for (Protocol p : nccl::kAllProtocols) {
        float& cell = table[static_cast<int>(a) * nccl::kNumProtocols + static_cast<int>(p)];
        cell = static_cast<float>(NCCL_ALGO_PROTO_IGNORE);
        if (model.unsupported(c, a, p)) continue;
        if (algo && !nccl::selects(*algo, c, a)) continue;
        if (proto && !nccl::selects(*proto, c, p)) continue;
        // NCCL turns LL128 on only where it is safe, unless NCCL_PROTO names it.
        if (model.corrupts(a, p) && !(proto && nccl::selects_explicitly(*proto, c, p))) continue;
        cell = static_cast<float>(model.nccl_estimate_us(c, bytes, a, p));
      }
  }
};

CommTuning::CommTuning(const CommShape& shape) {
  try {
    impl_.reset(new Impl{shape,
                         make_model(shape),
                         env_spec<nccl::AlgoSpec>("NCCL_ALGO", nccl::parse_algo_spec),
                         env_spec<nccl::ProtoSpec>("NCCL_PROTO", nccl::parse_proto_spec),
                         nullptr,
                         nullptr,
                         {},
                         {}});
  } catch (const InputError& e) {
    throw std::runtime_error(e.what());
  }
  impl_->plugin = process_plugin();
  if (!impl_->plugin) return;
  ncclNvlDomainInfo_v5_t nvl{shape.nodes, shape.min_local_ranks, shape.max_local_ranks};
  ncclTunerConstants_v5_t constants = sim::default_tuner_constants();
  ncclResult_t r = impl_->plugin->init(&impl_->context, shape.comm_hash, static_cast<size_t>(shape.ranks),
                                       static_cast<size_t>(shape.nodes), plugin_log, &nvl, &constants);
  if (r != ncclSuccess) {
    impl_->plugin = nullptr;
    throw std::runtime_error("the tuner plugin's init returned " + std::to_string(static_cast<int>(r)));
  }
}

CommTuning::~CommTuning() {
  if (impl_ && impl_->plugin) impl_->plugin->finalize(impl_->context);
}

double CommTuning::p2p_time_us(const sim::P2pTraffic& traffic) const {
  return impl_->model.p2p_traffic_time_us(traffic);
}

std::string CommTuning::plugin_text() const {
  if (!impl_->plugin) return "none";
  return std::string(impl_->plugin->name()) + " (v" + std::to_string(impl_->plugin->version()) + ") from " +
         impl_->plugin->library();
}

int CommTuning::choose(int collective, uint64_t bytes, bool capturing, TunedChoice* out,
                       std::string* why) const {
  const Impl& m = *impl_;
  const auto c = nccl::collective_from_id(collective);
  if (!c) {
    *why = "not a collective the tuner sees";
    return ncclInvalidArgument;
  }
  *out = TunedChoice{};
  if (m.shape.ranks < 2) {  // NCCL does not consult the tuner: a local copy
    out->duration_us = m.model.true_time_us(*c, bytes, sim::SimChoice{Algorithm::ring, Protocol::simple, 1});
    return ncclSuccess;
  }
  const Impl::Table& before = m.table_for(*c, bytes);
  Impl::Table table = before;
  int channels = 0;
  if (m.plugin) {
    ncclResult_t r = m.plugin->get_coll_info(m.context, static_cast<ncclFunc_t>(collective), bytes, 1,
                                             table.data(), capturing ? 1 : 0, &channels);
    if (r != ncclSuccess) {
      *why = "the tuner plugin's getCollInfo returned " + std::to_string(static_cast<int>(r));
      return r;
    }
  }
  auto pick = nccl::cheapest_entry(table.data());
  if (!pick) {
    *why = "Error : no algorithm/protocol available";
    return ncclInternalError;
  }
  const auto a = *nccl::algorithm_from_id(pick->algorithm);
  const auto p = *nccl::protocol_from_id(pick->protocol);
  const size_t cell = static_cast<size_t>(pick->algorithm * nccl::kNumProtocols + pick->protocol);
  if (before[cell] < 0.0f) {
    *why = "the tuner made " + std::string(nccl::nccl_name(a)) + "/" + std::string(nccl::nccl_name(p)) +
           " usable where NCCL had ruled it out (cost -1)";
    return ncclInternalError;
  }
  auto run = m.runs.find({*c, bytes, pick->algorithm, pick->protocol, channels});
  if (run == m.runs.end()) {
    auto resolved = m.model.resolve(*c, bytes, runners::Candidate{a, p, channels > 0 ? channels : 0});
    if (!resolved) {
      *why =
          "the model cannot run " + std::string(nccl::nccl_name(a)) + "/" + std::string(nccl::nccl_name(p));
      return ncclInternalError;
    }
    run = m.runs
              .emplace(std::make_tuple(*c, bytes, pick->algorithm, pick->protocol, channels),
                       std::make_pair(resolved->channels, m.model.true_time_us(*c, bytes, *resolved)))
              .first;
  }
  out->algorithm = pick->algorithm;
  out->protocol = pick->protocol;
  out->channels = run->second.first;
  out->estimate_us = before[cell];
  out->duration_us = run->second.second;
  out->corrupts = m.model.corrupts(a, p);
  out->consulted = true;
  return ncclSuccess;
}

}  // namespace autotune::standin
