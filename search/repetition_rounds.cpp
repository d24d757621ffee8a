#include "search/repetition_rounds.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace autotune::search {
namespace {

// The first round that may give a doubt up: by then each side holds 35 repetitions (5 + 10 + 20), enough
// for the interval's width to say how the noise behaves there.
constexpr int kFirstGiveUpRound = 2;

std::string doubt_percent(double gain) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", gain * 100.0);
  return buf;
}

// "allreduce at 64 KiB: the gain's interval holds the threshold (+3.2%, +1.0%..+5.1% against +3.0%, 20
// repetitions)"
std::string said(const Doubt& d) {
  std::string out = d.why;
  if (d.questions.empty()) return out;
  const DoubtQuestion& q = d.questions.front();
  return out + " (" + doubt_percent(q.interval.gain) + ", " + doubt_percent(q.interval.low) + ".." +
         doubt_percent(q.interval.high) + " against " + doubt_percent(q.threshold) + ", " +
         std::to_string(q.samples) + " repetitions)";
}

// Every question of the doubt is beyond the cap, and none decides whether a rule holds.
bool hopeless(const Doubt& d, int cap) {
  return !d.questions.empty() &&
         std::none_of(d.questions.begin(), d.questions.end(), [&](const DoubtQuestion& q) {
           return q.decides_a_rule || could_settle(q, cap + q.samples);
         });
}

}  // namespace

bool could_settle(const DoubtQuestion& q, int cap) {
  if (q.samples <= 0 || !q.interval.measured()) return true;
  const double shrink = std::sqrt(static_cast<double>(q.samples) / std::max(cap, q.samples));
  GainInterval at_cap = q.interval;
  at_cap.low = q.interval.gain - (q.interval.gain - q.interval.low) * shrink;
  at_cap.high = q.interval.gain + (q.interval.high - q.interval.gain) * shrink;
  return !at_cap.straddles(q.threshold);
}

void spend_repetitions(const StrategyInput& in, const MeasureFn& measure, MeasurementTable& table,
                       StrategyReport& report, const SpentPoints& spent) {
  std::vector<nccl::Collective> collectives;
  for (const auto& cs : in.collectives) collectives.push_back(cs.collective);
  SpentPoints given_up;
  auto settled = [&](nccl::Collective c, uint64_t b) {
    return spent.count({c, b}) || given_up.count({c, b});
  };
  // Nothing new to give rounds to: the collective is skipped (its doubts cost a bootstrap per size).
  auto nothing_new = [&](nccl::Collective c) {
    const auto sizes = table.sizes(c);
    return std::all_of(sizes.begin(), sizes.end(), [&](uint64_t b) { return settled(c, b); });
  };
  for (int round = 0; round < in.repetition_rounds; ++round) {
    bool any = false;
    // Each round measures twice the repetitions of the one before (10, 20, 40, ... after 5): few rounds,
    // each a measurement, reach many samples, and on GPUs one long measurement costs less than several short
    // ones. The first round doubles too: 5 more would be the measurement that was just made, again.
    const int repetitions = in.repetitions << (round + 1);
    // What this round and the later ones would add to each side: the cap a doubt is judged against.
    const int still_to_add = (in.repetitions << (in.repetition_rounds + 1)) - repetitions;
    for (nccl::Collective c : collectives) {
      if (nothing_new(c)) continue;
      std::vector<runners::MeasureRequest> requests;
      for (const Doubt& d : doubts(table, {c}, in.derive)) {
        if (settled(c, d.bytes)) continue;
        if (round >= kFirstGiveUpRound && hopeless(d, still_to_add)) {
          given_up.insert({c, d.bytes});
          report.given_up.push_back(said(d) + ": given up, " +
                                    std::to_string(d.questions.front().samples + still_to_add) +
                                    " repetitions could not settle it");
          continue;
        }
        // A candidate not measured at this size yet gets a first measurement, as any other. Where that is
        // all the doubt asks (a neighbouring run that could reach a size it was not measured at), the sides
        // already measured keep their repetitions: the new side's first measurement may settle it, and a
        // noise-free run stays at the first repetitions.
        const bool only_new = std::all_of(d.questions.begin(), d.questions.end(),
                                          [](const DoubtQuestion& q) { return q.samples == 0; });
        for (const auto& cand : d.candidates) {
          const bool measured = table.find(c, d.bytes, cand) != nullptr;
          if (measured && only_new) continue;
          requests.push_back({c, d.bytes, cand, measured ? repetitions : in.repetitions});
        }
      }
      if (requests.empty()) continue;
      any = true;
      auto got = measure(requests);
      if (!got) {
        report.skipped.push_back("extra repetitions of " + std::string(nccl::name(c)) + " from round " +
                                 std::to_string(round + 1) + " on (budget)");
        return;
      }
      for (const auto& m : *got) table.add(m);
      report.measurements += got->size();
    }
    if (!any) return;
  }
  // The rounds ran out with doubts left: the answer there rests on the cap's repetitions, said so.
  for (nccl::Collective c : collectives)
    for (const Doubt& d : nothing_new(c) ? std::vector<Doubt>{} : doubts(table, {c}, in.derive))
      if (!settled(c, d.bytes)) report.given_up.push_back(said(d) + ": still in doubt after the last round");
}

}  // namespace autotune::search
