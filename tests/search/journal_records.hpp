#pragma once
// Journal records made from measurements, and the candidates the search tests measure most.

#include <map>
#include <string>

#include "runners/runner.hpp"
#include "search/journal.hpp"

namespace autotune::search::test {

// One record of the calibration's only shape (one node, 8 ranks), under the setting named.
inline JournalRecord rec(const runners::Measurement& m, const std::string& setting = "default",
                         std::map<std::string, std::string> env = {}) {
  return {{setting, std::move(env)}, {1, 8}, 0, m, "simulated", "test", ""};
}

inline const runners::Candidate kRingSimple{nccl::Algorithm::ring, nccl::Protocol::simple, 0};
inline const runners::Candidate kRingLL{nccl::Algorithm::ring, nccl::Protocol::ll, 0};

}  // namespace autotune::search::test
