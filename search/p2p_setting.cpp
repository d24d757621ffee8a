#include "search/p2p_setting.hpp"

#include <map>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "search/strategy_samples.hpp"

namespace autotune::search {

namespace {

// One series: a scale, an operation and a candidate, over its sizes.
using SeriesKey = std::tuple<runners::Scale, int, CandidateKey>;
// Per series, per size: the default setting's samples and the judged setting's.
using Pooled = std::map<SeriesKey, std::map<uint64_t, std::pair<std::vector<double>, std::vector<double>>>>;

Pooled pool(std::span<const JournalRecord> records, const std::string& setting_id) {
  Pooled out;
  for (const JournalRecord& r : records) {
    const runners::Measurement& m = r.measurement;
    const bool base = r.setting.is_default(), judged = r.setting.id == setting_id;
    if ((!base && !judged) || m.outcome != runners::Outcome::ok || r.source == "production") continue;
    if (!r.measured_under.empty()) continue;  // another setting's measurement counted for this one
    auto& at =
        out[{r.scale, static_cast<int>(m.request.operation()), key_of(m.request.candidate)}][m.request.bytes];
    auto& into = base ? at.first : at.second;
    into.insert(into.end(), m.times_us.begin(), m.times_us.end());
  }
  return out;
}

GainInterval series_gain(const std::map<uint64_t, std::pair<std::vector<double>, std::vector<double>>>& sizes,
                         double confidence) {
  std::vector<SamplePair> pairs;
  for (const auto& [bytes, both] : sizes)
    if (!both.first.empty() && !both.second.empty()) pairs.push_back({both.first, both.second});
  return gain_interval(pairs, confidence);
}

std::string signed_percent(double v) {
  return fmt::format("{:+.1f}%", 100.0 * v);
}

}  // namespace

P2pSettingVerdict judge_p2p_setting(std::span<const JournalRecord> records, const std::string& setting_id,
                                    const P2pSettingOptions& options) {
  P2pSettingVerdict v;
  v.setting = setting_id;
  const Pooled pooled = pool(records, setting_id);
  std::map<uint64_t, std::pair<std::vector<double>, std::vector<double>>> p2p;  // every p2p size, pooled
  uint64_t slot = 0;
  for (const auto& [key, sizes] : pooled) {
    const auto op = static_cast<nccl::Operation>(std::get<1>(key));
    if (nccl::is_point_to_point(op)) {
      for (const auto& [bytes, both] : sizes) p2p[slot++] = both;  // each (series, size) its own pair
      continue;
    }
    const GainInterval g = series_gain(sizes, options.confidence);
    if (!g.measured()) continue;
    ++v.collectives_compared;
    if (!v.costs && g.high < 0.0)
      v.costs =
          fmt::format("{} {} at {}: {} [{}, {}]", nccl::name(op), to_string(candidate_of(std::get<2>(key))),
                      runners::describe_shape(std::get<0>(key)), signed_percent(g.gain),
                      signed_percent(g.low), signed_percent(g.high));
  }
  v.p2p_gain = series_gain(p2p, options.confidence);
  const std::string gain = v.p2p_gain.measured()
                               ? fmt::format("point-to-point {} [{}, {}]", signed_percent(v.p2p_gain.gain),
                                             signed_percent(v.p2p_gain.low), signed_percent(v.p2p_gain.high))
                               : "no point-to-point measured under both";
  if (!v.p2p_gain.beats(options.min_gain))
    v.why = gain + ": not beyond " + signed_percent(options.min_gain) + " and the noise";
  else if (v.costs)
    v.why = gain + ", but it slows " + *v.costs + " beyond the noise";
  else
    v.exported = true, v.why = gain + "; no collective slower beyond the noise (" +
                               std::to_string(v.collectives_compared) + " series compared)";
  return v;
}

}  // namespace autotune::search
