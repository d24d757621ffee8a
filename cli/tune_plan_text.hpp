#pragma once
// `tune --dry-run`'s plan for people (text) and for programs (--format json): per scale and in total the
// measurements, the estimated time and node-hours, and what running the smaller scales side by side on
// disjoint nodes (calibrate/concurrent_scales.hpp) saves.

#include <nlohmann/json.hpp>
#include <string>

#include "calibrate/calibration_setup.hpp"

namespace autotune::cli {

std::string plan_text(const calibrate::CalibrationSetup& setup);
nlohmann::json plan_json(const calibrate::CalibrationSetup& setup);

}  // namespace autotune::cli
