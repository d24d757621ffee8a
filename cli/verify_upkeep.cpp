#include "cli/verify_upkeep.hpp"

#include <ctime>
#include <iostream>

#include "common/utc_time.hpp"
#include "launcher/environment.hpp"
#include "launcher/job_nccl.hpp"
#include "profiles/upkeep_record.hpp"
#include "topology/driver_version.hpp"

namespace autotune::cli {

NodeVersions node_versions() {
  const auto nccl = launcher::find_job_nccl(launcher::process_environment());
  return {nccl.version ? nccl.version->text() : "", topology::nvidia_driver_version()};
}

std::optional<std::string> unchanged_since_last_verify(const std::filesystem::path& store,
                                                       const std::string& cluster, const NodeVersions& now) {
  const auto last = profiles::read_upkeep_record(store, "verify", cluster);
  if (!last) return std::nullopt;
  const auto fact = [&](const char* k) {
    const auto it = last->facts.find(k);
    return it == last->facts.end() ? std::string("(none recorded)") : it->second;
  };
  if (fact("nccl") != now.nccl || fact("driver") != now.driver) return std::nullopt;
  return "NCCL " + (now.nccl.empty() ? std::string("(none)") : now.nccl) + " and driver " +
         (now.driver.empty() ? std::string("(none)") : now.driver) + ", as at the last verify (" +
         utc_timestamp(static_cast<std::time_t>(last->time)) + ", " + last->result + ")";
}

void record_verify(const std::filesystem::path& store, const std::string& cluster,
                   const calibrate::VerifyResult& r, bool nothing_checked, const NodeVersions& versions) {
  std::error_code ec;
  if (!std::filesystem::is_directory(store, ec)) return;  // a profile verified outside any store
  const int loses = r.count(calibrate::Verdict::now_loses);
  const std::string detail = std::to_string(r.count(calibrate::Verdict::still_wins)) + " still win, " +
                             std::to_string(r.count(calibrate::Verdict::no_longer_wins)) +
                             " no longer win, " + std::to_string(loses) + " now lose, " +
                             std::to_string(r.count(calibrate::Verdict::not_checked)) + " not checked";
  try {
    profiles::write_upkeep_record(store, {"verify",
                                          cluster,
                                          loses > 0 || nothing_checked ? "fail" : "ok",
                                          static_cast<int64_t>(std::time(nullptr)),
                                          detail,
                                          {{"nccl", versions.nccl}, {"driver", versions.driver}}});
  } catch (const std::exception& e) {
    std::cerr << "warning: the store keeps no record of this verify: " << e.what() << "\n";
  }
}

}  // namespace autotune::cli
