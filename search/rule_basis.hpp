#pragma once
// Which rules of a derivation rest on measurements at their own scale and which on a prediction: a scale
// whose journal records include ones of source "predicted" (calibrate/scale_prediction.hpp) was predicted
// from the smaller scales and confirmed by measuring a few sizes; each of its rules says whether any of its
// sizes was among those (confirmed) or not (predicted). Rules of scales measured in full stay unmarked.

#include <span>
#include <vector>

#include "search/derive.hpp"
#include "search/journal.hpp"

namespace autotune::search {

// The journal source of records that were predicted, not measured.
inline constexpr const char* kPredictedSource = "predicted";

// Sets profiles::Rule::basis on the rules of predicted scales, from the records they were derived from.
void mark_rule_basis(std::vector<DerivedRule>& rules, std::span<const JournalRecord> records,
                     const runners::ProcessSetting& setting);

}  // namespace autotune::search
