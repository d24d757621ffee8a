#pragma once
// What a calibration saw of the point-to-point operations (all-to-all, send/recv, ...) it measured: per shape
// and per operation (and per kind of group of the layout that runs it), the sizes and NCCL's default busbw at
// a few of them, under NCCL's default process-wide settings. No rule comes of them (NCCL asks no tuner for
// point-to-point operations), so this is what tune says of them beside its rules. Pure function.

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "profiles/job_layout.hpp"
#include "search/journal.hpp"

namespace autotune::calibrate {

// One line per (shape, operation), in the records' order: "ep (expert parallel), 16 groups of 2x4: alltoall
// at 14 sizes (8 B..64 KiB), NCCL's default busbw 0.01 GB/s at 8 B, 0.52 at 1 KiB, 9.8 at 64 KiB; no
// per-call rule exists (point-to-point: process-wide settings only)". Empty when none was measured.
std::vector<std::string> summarize_point_to_point(std::span<const search::JournalRecord> records,
                                                  const std::optional<profiles::JobLayout>& layout);

}  // namespace autotune::calibrate
