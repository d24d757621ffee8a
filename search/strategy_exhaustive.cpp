#include "search/strategy.hpp"

#include "common/byte_size.hpp"
#include "common/input_error.hpp"
#include "search/repetition_rounds.hpp"

namespace autotune::search {

using runners::Candidate;
using runners::MeasureRequest;
namespace {

class ExhaustiveStrategy : public Strategy {
 public:
  std::string_view name() const override { return "exhaustive"; }

  uint64_t planned_measurements(const StrategyInput& in) const override {
    uint64_t n = 0;
    for (const auto& cs : in.collectives) n += (cs.candidates.size() + 1) * in.sizes.size();
    return n;
  }

  StrategyReport run(const StrategyInput& in, const MeasureFn& measure) const override {
    StrategyReport report;
    MeasurementTable table;
    bool stopped = false;
    for (const auto& cs : in.collectives)
      for (size_t i = 0; i < in.sizes.size(); ++i) {
        std::vector<MeasureRequest> batch;
        batch.push_back({cs.collective, in.sizes[i], Candidate{}, in.repetitions});
        for (const auto& cand : cs.candidates)
          batch.push_back({cs.collective, in.sizes[i], cand, in.repetitions});
        auto got = measure(batch);
        if (!got) {
          report.skipped.push_back(std::string(nccl::name(cs.collective)) + " from " +
                                   human_byte_size(in.sizes[i]) + " up: not measured (budget)");
          stopped = true;
          break;
        }
        for (const auto& m : *got) table.add(m);
        report.measurements += got->size();
      }
    if (!stopped) spend_repetitions(in, measure, table, report);
    return report;
  }
};

}  // namespace

std::unique_ptr<Strategy> make_exhaustive_strategy() {
  return std::make_unique<ExhaustiveStrategy>();
}

std::unique_ptr<Strategy> make_strategy(std::string_view name, const AdaptiveOptions& adaptive) {
  if (name == "exhaustive") return make_exhaustive_strategy();
  if (name == "adaptive") return make_adaptive_strategy(adaptive);
  throw InputError("<arguments>", 0,
                   "--strategy: expected exhaustive or adaptive, found '" + std::string(name) + "'");
}

}  // namespace autotune::search
