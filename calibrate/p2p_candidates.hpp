#pragma once
// The process-wide point-to-point settings a calibration sweeps for a layout whose groups send/recv or
// all-to-all: each a job of its own (NCCL reads them once per process, as NCCL_IB_HCA), judged afterwards by
// search/p2p_setting.hpp. `--p2p-env` names them ("NCCL_P2P_NET_CHUNKSIZE=524288,NCCL_PXN_DISABLE=1+
// NCCL_IB_QPS_PER_CONNECTION=4", or "none"); without it a few candidates the simulator's point-to-point
// model and NCCL both act on are tried. Pure functions.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "calibrate/shapes.hpp"
#include "runners/process_setting.hpp"

namespace autotune::calibrate {

using EnvSet = std::map<std::string, std::string>;

// "A=1+B=2,C=3" -> {{A:1, B:2}, {C:3}}; "none" -> {}. Each name must be a point-to-point setting
// (nccl::is_point_to_point_env_key) and each value one NCCL takes (nccl::check_env_entry), each set
// consistent (nccl::env_set_problem). Throws InputError naming --p2p-env.
std::vector<EnvSet> parse_p2p_env(std::string_view text);

// The candidates tried without --p2p-env: a larger network chunk (512 KiB, the most NCCL's default 4 MiB
// buffer allows), 4 channels per network peer, PXN off.
std::vector<EnvSet> default_p2p_candidates();

// Whether the request asks for point-to-point traffic between nodes could exist: a --shapes entry with a
// point-to-point operation across nodes, or a layout with expert, pipeline or context groups.
bool asks_point_to_point(const std::vector<ShapeRequest>& shapes,
                         const std::optional<ParallelLayout>& layout);

// The jobs: "p2p:NCCL_PXN_DISABLE=1", one per set, in order.
std::vector<runners::ProcessSetting> p2p_settings(const std::vector<EnvSet>& sets);

}  // namespace autotune::calibrate
