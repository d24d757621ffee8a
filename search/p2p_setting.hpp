#pragma once
// Whether a process-wide point-to-point setting (NCCL_P2P_NET_CHUNKSIZE, NCCL_PXN_DISABLE, ...; measured in a
// job of its own, as NCCL_IB_HCA is) may enter a profile's [env]: only where it beats NCCL's defaults beyond
// the noise on the point-to-point measurements (alltoall, sendrecv, ...) AND costs no collective measured
// under both more than the noise: the setting runs beside every rule of the profile, and some (NCCL_BUFFSIZE,
// NCCL_NET_GDR_LEVEL) change collectives too. Measured, not assumed: a collective that was not measured under
// the setting is no evidence either way, and the verdict says how many were compared. The same statistics as
// the rules (search/gain_interval.hpp). Pure function of the journal's records.

#include <optional>
#include <span>
#include <string>

#include "search/gain_interval.hpp"
#include "search/journal.hpp"

namespace autotune::search {

struct P2pSettingOptions {
  double min_gain = 0.03;    // the point-to-point gain must beat this beyond the noise
  double confidence = 0.90;  // of every interval
};

struct P2pSettingVerdict {
  std::string setting;    // the ProcessSetting id judged
  GainInterval p2p_gain;  // over every point-to-point size measured under both, all operations and scales
  // The first collective series (scale, collective, candidate over its sizes) the setting slows beyond the
  // noise: "allreduce ring/simple at 2x8 (16 ranks): -12.0% [-14.1%, -9.8%]".
  std::optional<std::string> costs;
  int collectives_compared = 0;  // collective series measured under both
  bool exported = false;
  std::string why;  // one line for people
};

// Judges `setting_id` against the default setting's records ("default", empty env) among `records`.
P2pSettingVerdict judge_p2p_setting(std::span<const JournalRecord> records, const std::string& setting_id,
                                    const P2pSettingOptions& options = {});

}  // namespace autotune::search
