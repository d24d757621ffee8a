#include "search/rule_basis.hpp"

namespace autotune::search {

void mark_rule_basis(std::vector<DerivedRule>& rules, std::span<const JournalRecord> records,
                     const runners::ProcessSetting& setting) {
  for (auto& r : rules) {
    bool predicted = false, measured_inside = false;
    for (const auto& rec : records) {
      if (rec.setting.id != setting.id || !(rec.scale == r.scale) || rec.source == "production") continue;
      if (rec.source == kPredictedSource) {
        predicted = true;
        continue;
      }
      const auto& q = rec.measurement.request;
      if (q.collective == r.rule.collective && !q.point_to_point && q.bytes >= r.rule.min_bytes &&
          q.bytes <= r.rule.max_bytes)
        measured_inside = true;
    }
    if (predicted)
      r.rule.basis = measured_inside ? profiles::RuleBasis::confirmed : profiles::RuleBasis::predicted;
  }
}

}  // namespace autotune::search
