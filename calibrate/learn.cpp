#include "calibrate/learn.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include "common/atomic_file.hpp"
#include "common/input_error.hpp"
#include "common/text.hpp"
#include "common/utc_time.hpp"
#include "runners/runner.hpp"

namespace autotune::calibrate {
namespace {

using EvidenceKey = std::tuple<int, int, int, int, int, int, int, int>;

EvidenceKey key_of(const profiles::TelemetryRow& r) {
  return {r.nodes,
          r.ranks,
          r.ranks_per_node,
          static_cast<int>(r.collective),
          r.bytes_log2,
          static_cast<int>(r.algorithm),
          static_cast<int>(r.protocol),
          r.channels};
}

// Telemetry keeps a histogram's quantiles, not repetitions, so tune's bootstrap interval cannot run on it:
// the test quantiles allow is the one tune used before it had intervals, the interquartile ranges wholly
// apart (with thousands of calls behind each quantile, far stronger evidence than five repetitions).
bool clearly_faster(const Evidence& faster, const Evidence& slower) {
  return faster.p75_us < slower.p25_us;
}

bool covers(const profiles::Rule& r, const Evidence& e) {
  const profiles::CommShape shape{e.nodes, e.ranks, e.ranks_per_node, e.ranks_per_node};
  const auto bytes = static_cast<uint64_t>(std::llround(e.mean_bytes));
  return e.collective == r.collective && r.applies_to(shape) && bytes >= r.min_bytes && bytes <= r.max_bytes;
}

bool runs_rule(const profiles::Rule& r, const Evidence& e) {
  return e.algorithm == r.algorithm && e.protocol == r.protocol &&
         (r.channels == 0 || e.channels == r.channels);
}

bool is_runner_up(const profiles::Rule& r, const Evidence& e) {
  if (!r.runner_up) return false;
  const auto& u = *r.runner_up;
  return e.algorithm == u.algorithm && e.protocol == u.protocol &&
         (u.channels == 0 || e.channels == u.channels);
}

}  // namespace

std::string_view name(Decider d) {
  switch (d) {
    case Decider::rule:
      return "rule";
    case Decider::explore:
      return "explore";
    case Decider::nccl:
      break;
  }
  return "nccl";
}

Decider decider(const profiles::Profile& profile, const Evidence& e) {
  for (const auto& r : profile.rules) {
    if (!covers(r, e)) continue;
    if (runs_rule(r, e)) return Decider::rule;
    return is_runner_up(r, e) ? Decider::explore : Decider::nccl;
  }
  return Decider::nccl;
}

namespace {

std::string choice_text(const Evidence& e) {
  return std::string(nccl::name(e.algorithm)) + "/" + std::string(nccl::name(e.protocol)) + "/" +
         std::to_string(e.channels);
}

std::string figures(const Evidence& e) {
  return choice_text(e) + " p50 " + three_digits(e.p50_us) + " us (p25-p75 " + three_digits(e.p25_us) + "-" +
         three_digits(e.p75_us) + ", " + std::to_string(e.count) + " calls) at " + std::to_string(e.nodes) +
         "x" + std::to_string(e.ranks_per_node) + ", " + three_digits(e.mean_bytes) + " B";
}

// The rule's verdict from one range's evidence; nullopt when production says nothing beyond the noise.
std::optional<LearnChange> judge(const profiles::Rule& r, const std::vector<const Evidence*>& mine,
                                 const std::vector<const Evidence*>& others,
                                 const search::DeriveOptions& options, const CalibrationDefaults& defaults) {
  for (const Evidence* own : mine) {
    for (const Evidence* alt : others) {
      if (alt->bytes_log2 != own->bytes_log2 || alt->nodes != own->nodes || alt->ranks != own->ranks ||
          alt->count < kMinCalls)
        continue;
      const double gain = own->p50_us / alt->p50_us - 1.0;
      if (gain > options.min_gain && clearly_faster(*alt, *own)) {
        profiles::Rule after = r;
        after.algorithm = alt->algorithm;
        after.protocol = alt->protocol;
        after.channels = r.runner_up && is_runner_up(r, *alt) ? r.runner_up->channels : alt->channels;
        const auto bytes = static_cast<uint64_t>(std::llround(alt->mean_bytes));
        after.busbw_gbps = search::busbw_gbps(r.collective, alt->ranks, bytes, alt->p50_us);
        after.runner_up =
            profiles::Rule::RunnerUp{r.algorithm, r.protocol, r.channels,
                                     search::busbw_gbps(r.collective, own->ranks, bytes, own->p50_us)};
        after.samples = static_cast<int>(std::min<uint64_t>(alt->count, 1u << 30));
        return LearnChange{LearnChange::Kind::replaced, r, after,
                           "production: " + figures(*alt) + " beats the rule's " + figures(*own) + " by " +
                               three_digits(gain * 100) + " %, interquartile ranges apart"};
      }
      if (is_runner_up(r, *alt)) {
        profiles::Rule after = r;
        after.runner_up.reset();
        return LearnChange{LearnChange::Kind::runner_up_retired, r, after,
                           "production: the runner-up " + figures(*alt) + " did not beat the rule's " +
                               figures(*own) + " beyond the noise: the range is decided"};
      }
    }
  }
  for (const Evidence* own : mine) {
    if (own->count < kMinCalls) continue;
    // NCCL's default at calibration: the rule's own record of it, else the journal's at this shape and size
    // (a rule made by hand, imported or older is judged by the same test as any other).
    std::optional<double> default_busbw = r.default_busbw_gbps;
    if (!default_busbw || !(*default_busbw > 0.0))
      default_busbw = defaults.busbw_near(r.collective, own->nodes, own->ranks, own->mean_bytes);
    if (!default_busbw || !(*default_busbw > 0.0)) continue;
    // As a time for this size: busbw = bytes * factor / time.
    const double default_us =
        own->mean_bytes * nccl::bus_bandwidth_factor(r.collective, own->ranks) / (*default_busbw * 1e3);
    if (own->p25_us > default_us * (1.0 + options.min_gain))
      return LearnChange{LearnChange::Kind::dropped, r, std::nullopt,
                         "production: the rule's " + figures(*own) +
                             " is slower, all of its interquartile "
                             "range, than NCCL's default was at calibration (" +
                             three_digits(default_us) + " us): NCCL decides again"};
  }
  return std::nullopt;
}

}  // namespace

std::string_view name(LearnChange::Kind k) {
  switch (k) {
    case LearnChange::Kind::replaced:
      return "replaced";
    case LearnChange::Kind::dropped:
      return "dropped";
    case LearnChange::Kind::runner_up_retired:
      return "runner-up retired";
  }
  return "?";
}

std::vector<Evidence> pool(const std::vector<TelemetryFile>& files) {
  std::map<EvidenceKey, Evidence> by_key;
  for (const TelemetryFile& f : files)
    for (const profiles::TelemetryRow& r : f.telemetry.rows) {
      Evidence& e = by_key[key_of(r)];
      const double n0 = static_cast<double>(e.count), n1 = static_cast<double>(r.count), n = n0 + n1;
      auto mix = [&](double a, double b) { return (a * n0 + b * n1) / n; };
      if (e.count == 0) {
        e.nodes = r.nodes, e.ranks = r.ranks, e.ranks_per_node = r.ranks_per_node;
        e.collective = r.collective, e.bytes_log2 = r.bytes_log2;
        e.algorithm = r.algorithm, e.protocol = r.protocol, e.channels = r.channels;
        e.min_us = r.min_us, e.max_us = r.max_us;
      }
      e.mean_bytes = mix(e.mean_bytes, r.mean_bytes);
      e.p25_us = mix(e.p25_us, r.p25_us), e.p50_us = mix(e.p50_us, r.p50_us),
      e.p75_us = mix(e.p75_us, r.p75_us);
      e.min_us = std::min(e.min_us, r.min_us), e.max_us = std::max(e.max_us, r.max_us);
      e.count += r.count;
      e.sources.push_back(f.file.string() + ":" + std::to_string(r.line));
      e.jobs.insert(f.telemetry.job);
      e.users.insert(f.user);
    }
  std::vector<Evidence> out;
  for (auto& [k, e] : by_key) out.push_back(std::move(e));
  return out;
}

std::string contributors_text(const Evidence& e) {
  auto list = [](const std::set<std::string>& s) {
    std::string out;
    for (const auto& x : s) out += (out.empty() ? "" : ", ") + x;
    return out;
  };
  return std::to_string(e.jobs.size()) + (e.jobs.size() == 1 ? " job (" : " jobs (") + list(e.jobs) +
         ") of " + std::to_string(e.users.size()) + (e.users.size() == 1 ? " user (" : " users (") +
         list(e.users) + ")";
}

std::optional<double> CalibrationDefaults::busbw_near(nccl::Collective c, int nodes, int ranks,
                                                      double bytes) const {
  std::optional<double> best;
  double distance = 1e300;
  for (const Point& p : points) {
    if (p.collective != c || p.nodes != nodes || p.ranks != ranks) continue;
    const double d = std::abs(std::log2(static_cast<double>(p.bytes) / bytes));
    if (d <= 1.0 && d < distance) distance = d, best = p.busbw_gbps;
  }
  return best;
}

CalibrationDefaults calibration_defaults(std::span<const search::JournalRecord> records) {
  CalibrationDefaults out;
  for (const search::JournalRecord& r : records) {
    const auto& m = r.measurement;
    if (r.source == "production" || !r.setting.is_default() || !m.request.candidate.is_default() ||
        m.request.point_to_point || m.outcome != runners::Outcome::ok || !(m.busbw_gbps > 0.0))
      continue;
    out.points.push_back({m.request.collective, r.scale.nodes, r.scale.ranks, m.request.bytes, m.busbw_gbps});
  }
  return out;
}

LearnResult learn(const profiles::Profile& current, const std::vector<TelemetryFile>& files,
                  const LearnOptions& options, const CalibrationDefaults& defaults) {
  LearnResult result;
  result.profile = current;
  result.files = files.size();
  result.evidence = pool(files);
  std::vector<const Evidence*> counted;
  for (const Evidence& e : result.evidence) {
    if (static_cast<int>(e.jobs.size()) >= options.min_jobs &&
        static_cast<int>(e.users.size()) >= options.min_users) {
      counted.push_back(&e);
      continue;
    }
    result.held_back.push_back(choice_text(e) + " at " + std::to_string(e.nodes) + "x" +
                               std::to_string(e.ranks_per_node) + ", " + three_digits(e.mean_bytes) +
                               " B: " + contributors_text(e) + ", needs " + std::to_string(options.min_jobs) +
                               " jobs of " + std::to_string(options.min_users) + " users");
  }
  std::vector<profiles::Rule> rules;
  for (const profiles::Rule& r : current.rules) {
    std::vector<const Evidence*> mine, others;
    for (const Evidence* e : counted)
      if (covers(r, *e)) (runs_rule(r, *e) ? mine : others).push_back(e);
    auto change = judge(r, mine, others, options.derive, defaults);
    if (!change) {
      rules.push_back(r);
      continue;
    }
    if (change->after) rules.push_back(*change->after);
    result.changes.push_back(std::move(*change));
  }
  result.profile.rules = std::move(rules);
  return result;
}

std::vector<search::JournalRecord> production_records(const std::vector<Evidence>& evidence,
                                                      const std::string& learn_id) {
  std::vector<search::JournalRecord> out;
  const std::string now = utc_timestamp_now();
  for (const Evidence& e : evidence) {
    search::JournalRecord rec;
    rec.setting.id = "default";
    rec.scale = runners::Scale{e.nodes, e.ranks};
    runners::Measurement& m = rec.measurement;
    m.request.collective = e.collective;
    m.request.bytes = static_cast<uint64_t>(std::llround(e.mean_bytes));
    m.request.candidate = runners::Candidate{e.algorithm, e.protocol, e.channels};
    m.request.repetitions = 5;
    m.times_us = {e.min_us, e.p25_us, e.p50_us, e.p75_us, e.max_us};
    m.mean_times_us = m.times_us;
    m.busbw_gbps = search::busbw_gbps(e.collective, e.ranks, m.request.bytes, e.p50_us);
    m.algbw_gbps = e.p50_us > 0 ? static_cast<double>(m.request.bytes) / (e.p50_us * 1e3) : 0.0;
    m.used_algorithm = e.algorithm, m.used_protocol = e.protocol, m.used_channels = e.channels;
    rec.source = "production";
    rec.runner = "telemetry (" + std::to_string(e.count) + " calls, " + std::to_string(e.sources.size()) +
                 " rank files)";
    rec.time = now;
    rec.learn_id = learn_id;
    out.push_back(std::move(rec));
  }
  return out;
}

}  // namespace autotune::calibrate
