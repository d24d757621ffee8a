#include "metrics/store_metrics.hpp"

#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "calibrate/learn.hpp"
#include "calibrate/telemetry_trust.hpp"
#include "common/utc_time.hpp"
#include "nccl/version.hpp"
#include "profiles/compiled_rules.hpp"
#include "profiles/profile_toml.hpp"
#include "profiles/store.hpp"
#include "profiles/upkeep_record.hpp"
#include "runners/bandwidth.hpp"
#include "search/journal.hpp"

namespace autotune::metrics {
namespace {

constexpr const char* kPrefix = "nccl_autotune_";

// The families this module writes, by short name, in the order they are written.
class Families {
 public:
  void add(const std::string& name, const std::string& type, const std::string& help, Labels labels,
           double value) {
    auto [it, fresh] = index_.try_emplace(name, families_.size());
    if (fresh) families_.push_back({kPrefix + name, help, type, {}});
    families_[it->second].samples.push_back({std::move(labels), value});
  }
  std::vector<Family> take() { return std::move(families_); }

 private:
  std::vector<Family> families_;
  std::map<std::string, size_t> index_;
};

// One (shape, collective, size bucket) of a cluster's production.
using BucketKey = std::tuple<int, int, int, int, int>;  // nodes, ranks, ranks per node, collective, log2 size

struct Bucket {
  uint64_t calls = 0;
  std::map<calibrate::Decider, uint64_t> decided;
  double busbw_weighted = 0.0, spread_weighted = 0.0, bytes_weighted = 0.0;
};

std::string shape_text(int nodes, int ranks, int per_node) {
  return per_node > 0 ? std::to_string(nodes) + "x" + std::to_string(per_node)
                      : std::to_string(nodes) + "n" + std::to_string(ranks) + "r";
}

std::map<BucketKey, Bucket> buckets_of(const profiles::Profile& profile,
                                       const std::vector<calibrate::Evidence>& evidence) {
  std::map<BucketKey, Bucket> out;
  for (const auto& e : evidence) {
    if (e.count == 0 || e.p50_us <= 0) continue;
    Bucket& b = out[{e.nodes, e.ranks, e.ranks_per_node, static_cast<int>(e.collective), e.bytes_log2}];
    const double w = static_cast<double>(e.count);
    b.calls += e.count;
    b.decided[calibrate::decider(profile, e)] += e.count;
    b.busbw_weighted +=
        w * runners::busbw_gbps(e.collective, e.ranks, static_cast<uint64_t>(e.mean_bytes), e.p50_us);
    b.spread_weighted += w * (e.p75_us - e.p25_us) / e.p50_us;
    b.bytes_weighted += w * e.mean_bytes;
  }
  return out;
}

// What the profile expected at this bucket: the covering rule's calibrated busbw, else NCCL's default as the
// calibration journal measured it nearby; nullopt when neither is known.
std::optional<double> expected_gbps(const profiles::Profile& profile,
                                    const calibrate::CalibrationDefaults& defaults, const BucketKey& k,
                                    double bytes) {
  const auto [nodes, ranks, per_node, collective, log2] = k;
  const auto c = static_cast<nccl::Collective>(collective);
  const profiles::CommShape shape{nodes, ranks, per_node, per_node};
  const auto b = static_cast<uint64_t>(bytes);
  for (const auto& r : profile.rules)
    if (r.collective == c && r.applies_to(shape) && b >= r.min_bytes && b <= r.max_bytes)
      return r.busbw_gbps ? r.busbw_gbps : defaults.busbw_near(c, nodes, ranks, bytes);
  return defaults.busbw_near(c, nodes, ranks, bytes);
}

struct ClusterInput {
  const profiles::Profile* profile;
  Labels labels;  // cluster, nccl
  calibrate::TelemetryRead pending, learned;
  calibrate::CalibrationDefaults defaults;
};

void add_production(Families& f, const ClusterInput& in, const MetricsOptions& options) {
  std::vector<calibrate::TelemetryFile> files = in.pending.files;
  for (const auto& t : in.learned.files)
    if (t.telemetry.written >= options.now - options.window_s) files.push_back(t);
  for (const auto& [k, b] : buckets_of(*in.profile, calibrate::pool(files))) {
    const auto [nodes, ranks, per_node, collective, log2] = k;
    Labels l = in.labels;
    l.push_back({"shape", shape_text(nodes, ranks, per_node)});
    l.push_back({"collective", std::string(nccl::name(static_cast<nccl::Collective>(collective)))});
    l.push_back({"size_bucket", std::to_string(uint64_t{1} << log2)});
    const double n = static_cast<double>(b.calls);
    f.add("production_busbw_bytes_per_second", "gauge",
          "Bus bandwidth production reached (median per choice NCCL ran, weighted by calls)", l,
          b.busbw_weighted / n * 1e9);
    f.add("production_time_spread_ratio", "gauge",
          "Interquartile range of production GPU times over their median (the noise)", l,
          b.spread_weighted / n);
    if (auto e = expected_gbps(*in.profile, in.defaults, k, b.bytes_weighted / n))
      f.add("expected_busbw_bytes_per_second", "gauge",
            "Bus bandwidth the profile expected (its rule's calibration, else NCCL's default at calibration)",
            l, *e * 1e9);
    for (const auto d : {calibrate::Decider::rule, calibrate::Decider::explore, calibrate::Decider::nccl}) {
      Labels dl = l;
      dl.push_back({"decided_by", std::string(calibrate::name(d))});
      const auto it = b.decided.find(d);
      f.add("calls_decided_ratio", "gauge",
            "Share of the calls in telemetry decided by the profile's rule, its runner-up (exploration) or "
            "NCCL",
            dl, it == b.decided.end() ? 0.0 : static_cast<double>(it->second) / n);
    }
  }
}

void add_profile(Families& f, const ClusterInput& in, const std::filesystem::path& file,
                 const MetricsOptions& options) {
  const profiles::Profile& p = *in.profile;
  Labels info = in.labels;
  info.push_back({"digest", profiles::file_digest_text(file)});
  info.push_back({"source", std::string(profiles::name(p.provenance.source))});
  f.add("profile_info", "gauge", "The profile version in use (its digest) and where its figures come from",
        info, 1.0);
  f.add("profile_rules", "gauge", "Rules in the profile version in use", in.labels,
        static_cast<double>(p.rules.size()));
  if (auto created = parse_utc_timestamp(p.provenance.created)) {
    f.add("profile_created_timestamp_seconds", "gauge",
          "When the profile version in use was made (unix time)", in.labels, static_cast<double>(*created));
    f.add("profile_age_seconds", "gauge", "Age of the profile version in use", in.labels,
          static_cast<double>(options.now - *created));
  }
  uint64_t calls = 0;
  for (const auto& t : in.pending.files)
    for (const auto& r : t.telemetry.rows) calls += r.count;
  f.add("telemetry_pending_files", "gauge", "Telemetry files believed and awaiting learn", in.labels,
        static_cast<double>(in.pending.files.size()));
  f.add("telemetry_pending_calls", "gauge", "Collective calls in the telemetry awaiting learn", in.labels,
        static_cast<double>(calls));
}

void add_upkeep(Families& f, const std::vector<profiles::UpkeepRecord>& records,
                const MetricsOptions& options) {
  for (const auto& r : records) {
    const Labels l = {{r.command == "verify" ? "cluster" : "node", r.subject}};
    const std::string what =
        r.command == "verify" ? "verify of the cluster's profile" : "health check of the node";
    f.add(r.command + "_last_run_timestamp_seconds", "gauge", "When the last " + what + " ended (unix time)",
          l, static_cast<double>(r.time));
    f.add(r.command + "_last_run_age_seconds", "gauge", "Time since the last " + what + " ended", l,
          static_cast<double>(options.now - r.time));
    const bool verify = r.command == "verify";
    const bool success = verify ? r.result == "ok" : r.result != "block";
    f.add(r.command + "_last_success", "gauge",
          "1 when the last " + what + (verify ? " found no rule that now loses" : " found nothing blocking"),
          l, success ? 1.0 : 0.0);
    if (r.command == "check") {
      const auto d = r.facts.find("drained");
      f.add("check_node_drained", "gauge", "1 while the node is drained by nccl-autotune's health check", l,
            d != r.facts.end() && d->second == "true" ? 1.0 : 0.0);
    }
  }
}

}  // namespace

StoreMetrics collect_store_metrics(const std::filesystem::path& store, const MetricsOptions& options) {
  StoreMetrics out;
  Families f;
  std::set<std::string> refused;
  for (const auto& stored : profiles::Store(store).list()) {
    if (!stored.profile) {
      out.warnings.push_back(stored.file.string() + ": left out: " + stored.error);
      continue;
    }
    profiles::Profile profile;
    try {
      profile = profiles::read_profile(stored.file);  // with the rules' evidence (list() reads them without)
    } catch (const std::exception& e) {
      out.warnings.push_back(std::string("left out: ") + e.what());
      continue;
    }
    const auto version = nccl::Version::parse(profile.provenance.nccl_version);
    ClusterInput in{&profile,
                    {{"cluster", profile.cluster.name},
                     {"nccl", version ? version->major_minor_text() : profile.provenance.nccl_version}},
                    {},
                    {},
                    {}};
    const auto trust = calibrate::store_trust(profile, stored.file, stored.file);
    in.pending = calibrate::read_telemetry(store / "telemetry", trust);
    in.learned = calibrate::read_telemetry(store / "telemetry" / "learned", trust);
    for (const auto& r : in.pending.refused) refused.insert(r.file.string());
    const auto journal = profiles::Store::journal_beside(stored.file);
    std::error_code ec;
    if (std::filesystem::exists(journal, ec)) {
      try {
        in.defaults = calibrate::calibration_defaults(search::load_journal(journal).records);
      } catch (const std::exception& e) {
        out.warnings.push_back(std::string("journal left out: ") + e.what());
      }
    }
    add_profile(f, in, stored.file, options);
    add_production(f, in, options);
  }
  f.add("telemetry_refused_files", "gauge", "Telemetry files awaiting learn that learn would not believe", {},
        static_cast<double>(refused.size()));
  auto records = profiles::read_upkeep_records(store);
  for (auto& w : records.refused) out.warnings.push_back("left out: " + w);
  add_upkeep(f, records.records, options);
  out.families = f.take();
  return out;
}

}  // namespace autotune::metrics
