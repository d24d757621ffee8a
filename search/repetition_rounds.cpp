#include "search/repetition_rounds.hpp"

#include <algorithm>

#include "search/derive.hpp"

namespace autotune::search {

void spend_repetitions(const StrategyInput& in, const MeasureFn& measure, MeasurementTable& table,
                       StrategyReport& report, const SpentPoints& spent) {
  std::vector<nccl::Collective> collectives;
  for (const auto& cs : in.collectives) collectives.push_back(cs.collective);
  for (int round = 0; round < in.repetition_rounds; ++round) {
    bool any = false;
    // Each round doubles what the doubtful points hold (5, 10, 20, 40, ... repetitions): few rounds reach
    // many samples, and on GPUs one long measurement costs less than several short ones.
    const int repetitions = in.repetitions << round;
    for (nccl::Collective c : collectives) {
      // Nothing new to give rounds to: skip the collective (its doubts cost a bootstrap per size).
      const auto sizes = table.sizes(c);
      if (std::all_of(sizes.begin(), sizes.end(), [&](uint64_t b) { return spent.count({c, b}) > 0; }))
        continue;
      std::vector<runners::MeasureRequest> requests;
      for (const Doubt& d : doubts(table, {c}, in.derive))
        if (!spent.count({c, d.bytes}))
          for (const auto& cand : d.candidates) requests.push_back({c, d.bytes, cand, repetitions});
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
}

}  // namespace autotune::search
