#include "search/strategy_samples.hpp"

#include <algorithm>
#include <cmath>

namespace autotune::search {

using nccl::Collective;
using runners::Candidate;
using runners::Outcome;

CandidateKey key_of(const Candidate& c) {
  return {c.algorithm ? static_cast<int>(*c.algorithm) : -1, c.protocol ? static_cast<int>(*c.protocol) : -1,
          c.channels};
}

Candidate candidate_of(const CandidateKey& k) {
  Candidate c;
  if (std::get<0>(k) >= 0) c.algorithm = static_cast<nccl::Algorithm>(std::get<0>(k));
  if (std::get<1>(k) >= 0) c.protocol = static_cast<nccl::Protocol>(std::get<1>(k));
  c.channels = std::get<2>(k);
  return c;
}

double Samples::quantile(double q) const {
  if (times_us.empty()) return 0.0;
  std::vector<double> sorted = times_us;
  std::sort(sorted.begin(), sorted.end());
  double pos = q * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

void MeasurementTable::add(const runners::Measurement& m) {
  const auto& r = m.request;
  if (r.point_to_point) return;  // no tuner call, so no rule and nothing for a strategy to weigh
  Samples& s = data_[r.collective][r.bytes][key_of(r.candidate)];
  ++s.measurements;
  if (m.outcome == Outcome::ok) {
    s.times_us.insert(s.times_us.end(), m.times_us.begin(), m.times_us.end());
    if (m.used_algorithm) s.used_algorithm = m.used_algorithm;
    if (m.used_protocol) s.used_protocol = m.used_protocol;
    if (m.used_channels > 0) s.used_channels = m.used_channels;
  } else if (!s.failure) {
    s.failure = m.outcome;
    s.detail = m.detail;
  }
  if (m.outcome == Outcome::wrong_result || m.outcome == Outcome::timed_out)
    banned_[r.collective].insert(key_of(r.candidate));
}

const std::map<CandidateKey, Samples>* MeasurementTable::at(Collective c, uint64_t bytes) const {
  auto ci = data_.find(c);
  if (ci == data_.end()) return nullptr;
  auto bi = ci->second.find(bytes);
  return bi == ci->second.end() ? nullptr : &bi->second;
}

const Samples* MeasurementTable::find(Collective c, uint64_t bytes, const Candidate& candidate) const {
  const auto* row = at(c, bytes);
  if (!row) return nullptr;
  auto it = row->find(key_of(candidate));
  return it == row->end() ? nullptr : &it->second;
}

std::vector<uint64_t> MeasurementTable::sizes(Collective c) const {
  std::vector<uint64_t> out;
  auto ci = data_.find(c);
  if (ci != data_.end())
    for (const auto& [bytes, row] : ci->second) out.push_back(bytes);
  return out;
}

std::vector<Collective> MeasurementTable::collectives() const {
  std::vector<Collective> out;
  for (const auto& [c, rows] : data_) out.push_back(c);
  return out;
}

bool MeasurementTable::banned(Collective c, const Candidate& candidate) const {
  auto it = banned_.find(c);
  return it != banned_.end() && it->second.count(key_of(candidate));
}

std::optional<Choice> MeasurementTable::effective(Collective c, uint64_t bytes,
                                                  const Candidate& candidate) const {
  const Samples* s = find(c, bytes, candidate);
  auto a = candidate.algorithm ? candidate.algorithm : s ? s->used_algorithm : std::nullopt;
  auto p = candidate.protocol ? candidate.protocol : s ? s->used_protocol : std::nullopt;
  if (!a || !p) return std::nullopt;
  const int channels = candidate.channels > 0 ? candidate.channels : s ? s->used_channels : 0;
  return Choice{*a, *p, channels};
}

bool MeasurementTable::repeats_default(Collective c, uint64_t bytes, const Candidate& candidate) const {
  if (candidate.is_default()) return true;
  auto def = effective(c, bytes, Candidate{});
  if (!def || !candidate.algorithm || !candidate.protocol) return false;
  if (*candidate.algorithm != def->algorithm || *candidate.protocol != def->protocol) return false;
  return candidate.channels == 0 || candidate.channels == def->channels;
}

}  // namespace autotune::search
